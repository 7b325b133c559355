"""Shared English vocabulary for question routing: stop words, weak words, concept families.

Nothing here names a domain or an attribute. The matcher (:mod:`.matching`)
combines these with each scenario's own attribute text:

- ``STOP``: function words. They never make a question targeted; they only
  count inside a multi-word phrase ("time of day").
- ``WEAK``: content words that are everyday talk as much as attribute talk
  ("long", "time", "plan", "work", "free"). A weak word alone never targets an
  attribute ("How long do you plan to keep it?" is general); it adds to a
  match made by another word.
- ``FAMILIES``: synonym families of concepts shared across consumer domains
  (cancellation and commitment, turnaround speed, accessibility, language,
  noise, ...). An attribute whose own words (name, label, keywords, values)
  contain a member of a family is also reached by the family's other members,
  so "Can you get out of it anytime?" reaches a ``contract`` attribute whose
  keywords only say "contract" and "cancel". Families are written once, as
  plain English, and apply to every domain (and to custom scenarios).
- ``COST``: the price concept. A question that names cost *and* another
  attribute ("Would you pay more for a nonstop flight?") is about the other
  attribute (the trade-off rule in :mod:`.matching`).
"""

from __future__ import annotations

STOP = frozenset(
    """
    a about above after again against all am an and any anything are as at be been before being below
    between both but by can could did do does doing done during each either else ever for from had has have
    having he her here hers him his how i if in into is it its itself just let like me mine more most my
    myself no nor not of off on once or other our ours out over own per please rather really same she
    should so some something than that the their them then there these they this those through to too
    under until up us very was we were what whatever when where whether which while who whom why will
    with would you your yours yourself yourselves ok okay okay fine sure thing things kind sort lot lots
    im ive id youd youre youll youve dont doesnt isnt arent wont cant wouldnt shouldnt theres thats whats
    also maybe much many way bit little quite still even yet already
    """.split()
)

WEAK = frozenset(
    """
    long short time times day days week weeks weekly month months monthly year years yearly annual hour hours
    minute minutes early late often big small large size good better best great
    high higher low lower free extra plan plans keep use using used work working home people person
    family need needs want wants get getting go going make take full every only one two three four first
    last new old open set start end help able option options service services include includes included
    available matter matters important care prefer preference okay fine deal sure look looking find
    right left top side level amount number enough most least part whole main basic standard regular
    simple total overall kind type style way place around near far away back ahead next before
    pay paid spend cost price money fee fees charge cheap expensive budget afford save saving
    feel think know like love hate mind worry worried bother comfortable happy sit stay live come
    thing something anyone someone everyone everything support included included features feature
    person mostly usually typical typically day-to-day per each certain specific particular
    """.split()
)

# The price/cost concept (stems are compared after stemming; any inflection counts).
# Words whose Porter2 stem would merge them with an unrelated word ("connectivity" and
# "connecting" both become "connect"; "fitness" becomes "fit"): matched whole instead.
PROTECTED = frozenset({"connectivity", "fitness", "mobility", "mobile", "organic", "organization"})

# Set phrases rewritten to one word before matching, so a concept said in two words meets the one-word
# form an attribute uses ("up front" -> upfront, "after work" -> evening).
IDIOMS = {
    r"\bup front\b": "upfront", r"\bafter work\b": "evening", r"\bbefore work\b": "morning",
    r"\b(?:nine to five|9 to 5|9-5|nine-to-five)\b": "weekday daytime", r"\bduring the day\b": "daytime",
    r"\bat night\b": "night", r"\bon weekends\b": "weekends", r"\bhow much time\b": "how long",
    # "how ... pay" asks for the way of paying (billing, installments), "how much ... pay" for the amount
    r"\bhow (?!much\b|many\b)(?:\w+ ){0,4}(?:pay|paid|paying)\b": "how paymethod pay",
}

# Comparatives and superlatives Porter2 keeps whole ("longer", "cheapest"), mapped to their base word.
COMPARATIVES = {
    "longer": "long", "longest": "long", "shorter": "short", "shortest": "short", "bigger": "big",
    "biggest": "big", "smaller": "small", "smallest": "small", "faster": "fast", "fastest": "fast",
    "slower": "slow", "slowest": "slow", "quicker": "quick", "quickest": "quick", "sooner": "soon",
    "later": "late", "latest": "late", "earlier": "early", "earliest": "early", "closer": "close",
    "closest": "close", "nearer": "near", "nearest": "near", "farther": "far", "further": "far",
    "quieter": "quiet", "quietest": "quiet", "louder": "loud", "larger": "large", "largest": "large",
    "newer": "new", "newest": "new", "older": "old", "oldest": "old", "higher": "high", "highest": "high",
    "lower": "low", "lowest": "low", "cheaper": "cheap", "cheapest": "cheap", "safer": "safe",
    "safest": "safe", "lighter": "light", "lightest": "light", "heavier": "heavy", "thinner": "thin",
    "thicker": "thick", "softer": "soft", "firmer": "firm", "warmer": "warm", "cooler": "cool",
    "stronger": "strong", "weaker": "weak", "fewer": "few", "wider": "wide", "brighter": "bright",
}

# Phrases about the person, not an option, removed from a question before matching.
# "How long do you plan to keep it?": a how-question about the user's own habits or plans (its
# verb is not one of wanting or tolerating). "How do you spend your day?": spending time, not money.
USER_FRAMES = (
    r"\bspend(?:s|ing)?\b(?=(?: \w+){0,3} (?:day|days|time|hours|week|weeks|weekends|evenings|mornings|life)\b)",
    r"(?<=\btime\b)(?: \w+){0,4} spend\b",  # "how much time are you willing to spend": time, not money
    # the decision itself: "How soon are you hoping to decide?", "What's driving your decision?"
    r"\b(?:how soon|how quickly|how fast|when|timeline)\b(?=[^?.!]*\b(?:decide|deciding|decision|make up your mind)\b)",
    r"\bdriv(?:e|es|ing)\b(?= (?:your|the|this|that) (?:decision|choice)\b)",
    # the assistant's own suggestion: "this recommendation", "this choice"
    r"\b(?:this|that|the|my|your) (?:recommendation|suggestion|choice|decision)s?\b",
)
USER_FRAME = (
    r"\bhow (?:long|often|much time|many hours|many years|many times|active|far along)\b"
    r"(?= (?:do|did|does|have|has|had|will|would|are|were|is|was|can|could)\s+(?:you|your|they|we|he|she|it)\b"
    r"(?!\s+(?:want|need|prefer|like|mind|accept|expect|care|willing|comfortable|okay|ok|fine|open|happy|"
    r"able|hoping|hope|wish|tolerate|handle|put up|stand|afford)))"
)

COST = frozenset(
    """
    price prices pricing cost costs costly pay paying paid payment spend spending spent expensive cheap cheaper
    cheapest afford affordable budget money dollar dollars fee fees charge charges premium rate rates
    bucks save saving savings splurge pricier pricey extra
    """.split()
)

FAMILIES: tuple[frozenset[str], ...] = tuple(
    frozenset(family.split())
    for family in (
        "cancel cancellation cancelling canceling refund refundable nonrefundable non-refundable reschedule rebook",
        ("contract contracts commitment commit committed locked lock-in tied obligation cancel anytime whenever quit "
         "month-to-month minimum term terms sign-up binding flexible flexibility"),
        "warranty warranties guarantee guaranteed guarantees breakage coverage protection protected",
        ("quick quickly fast faster speed speedy turnaround rush rushed soon sooner asap same-day ready wait "
         "waiting slow slower delay delays"),
        ("hours evening evenings weekend weekends saturday saturdays sunday night nights morning mornings "
         "after-hours weekday weekdays daytime overnight late early"),
        ("location located where near nearby close closer distance far commute drive driving walk walkable "
         "walking neighborhood area town downtown city parking"),
        ("accessible accessibility wheelchair step-free stairs stair steps elevator mobility disability "
         "disabled walker cane ramp"),
        ("language languages speak speaks speaking spoken bilingual spanish english mandarin interpreter "
         "interpreters translation translate"),
        "noise noisy quiet quieter loud louder silent decibel",
        "private privacy confidential confidentiality discreet discretion anonymous incognito secret nda",
        "kid kids child children toddler toddlers baby babies infant infants booster highchair high-chair stroller",
        ("certified certification certifications credential credentials licensed license licensing qualified "
         "qualification qualifications accredited accreditation degree"),
        "experience experienced years seasoned veteran expertise expert",
        "online offline internet wifi wi-fi signal connection connectivity stream streaming download downloads",
        "delivery deliver delivered deliveries shipping ship ships shipment shipments arrive",
        "install installation installed installer setup set-up self-install diy handy",
        "battery batteries charge charging recharge",
        "screen screens display",
        "meal meals food snacks lunch dinner breakfast",
        "diet dietary vegan vegetarian gluten-free gluten keto allergy allergies",
        "support help customer-service helpdesk phone chat contact reach responsive responsiveness reply replies",
        "organic natural chemical chemicals non-toxic eco eco-friendly green sustainable",
        "camera cameras photo photos video videos picture pictures pics snapshot snapshots photograph",
        "seat seats seated seating sit sitting",
        "motion movement moves moving toss tossing turns disturb disturbed disturbing wake",
        "consult consultation consultations initial introductory intro conversation",
        "grammar rules explanation explanations explained immersion exposure conversational",
        "cook cooking cooked stove prep recipe recipes chop reheat microwave",
        "tax taxes irs filing filings w-2 1099",
        "variety menu choices selection recipes rotating",
        "class classes group groups lesson lessons session sessions",
        "live in-person person face-to-face video remote virtual zoom",
        "water waterproof water-resistant swim swimming rain",
        "alert alerts notification notifications notice reminder reminders text heads-up",
        "loaner shuttle ride rental transportation",
        "finance financing installments installment loan loans monthly-payments upfront deposit down-payment paymethod",
        "bill billing billed invoice invoices invoicing paymethod",
        "review reviews rating ratings rated stars reputation",
    )
)

# Questions about the user's own life rather than an option: their history ("Did you file last
# year?", "Have you had claims?", "your current setup"), amounts of their time ("How many hours a
# week do you drive?"), how they are getting on, and what brought them here. Such a question is
# general unless it is also put in an option frame (``OPTION_FRAME``: wanting, preferring, minding,
# being willing ...). On the development sets this makes a few history questions that are about an
# attribute general ("Did you miss filing last year?"), and many more generic ones right.
USER_LIFE = (
    r"\bdid (?:you|your|they|it)\b"
    r"|\bhave you (?:ever )?(?:had|been|seen|done|used|tried|owned|worked|lived|gone|taken|found|noticed)\b"
    r"|\b(?:in the past|so far|last (?:year|time|one|pair|few)|used to)\b"
    r"|\byour (?:current|last|previous|old|existing)\b"
    r"|\bhow (?:many hours|much time|many days|many times|often)\b(?! of\b)"  # not "hours of audio": an amount
    r"|\bhow (?:are|is) (?:you|things|it going)\b(?: and [\w ]+?)? ?(?:managing|doing|coping|finding|getting|holding"
    r"|settling|handling)?\b"
    r"|\b(?:what|where|why|how) (?:are|were) you\b(?! (?:looking for in|hoping for in|willing|okay|ok|comfortable"
    r"|open|able|happy|fine|set on|particular|picky))"
    r"|\bwhat (?:made|brought|got) you\b"
    r"|\b(?:find|picture|imagine|see) yourself\b|\bwhen you (?:picture|imagine|envision)\b|\bmost often\b"
)
OPTION_FRAME = (
    r"\b(?:would|willing|want|wants|prefer|preference|rather|mind|important|matter|matters|care|okay|ok"
    r"|comfortable|open to|need|needs|must|deal-?breaker|worth|hop(?:e|es|ing)|looking for|expect)\b"
)

# A question that asks how the user feels about something ("Do you have a preference on how the
# tickets get to you?", "How do you feel about ...", "Does ... matter to you?") is about an
# attribute by its frame alone: a weaker match names which one (``matching.PREFERENCE_THRESHOLD``).
PREFERENCE_FRAME = (
    r"\bpreferences? (?:on|about|for|regarding|between|as to|when it comes to|in terms of)\b"
    r"|\bhow (?:would|do|did) you (?:prefer|feel about|like)\b|\bfeel (?:about|strongly)\b"
    r"|\b(?:thoughts|feelings|opinions?|views?) (?:on|about)\b|\bmatters? (?:to you|much|at all)\b"
    r"|\bhow (?:important|much do you care)\b|\bdo you care (?:about|whether|if|how|who|what|when|where)\b"
    r"|\bparticular about\b|\bpicky about\b|\bimportant to you\b|\byour take on\b|\blean(?:ing)? towards?\b"
    r"|\bstrong feelings\b|\bhow set are you on\b"
)

# A trade-off: a higher cost offered for something else ("worth paying more", "a higher session fee",
# "spend a bit more for"). The price is what the user would give up, never the target, when another
# attribute is named.
TRADEOFF_FRAME = (
    r"\b(?:pay|paying|spend|spending|cost|costs|costing)\b(?: \w+){0,3} (?:more|extra|higher|premium)\b"
    r"|\b(?:more|extra|higher|bigger|a premium)\b(?: \w+){0,2} (?:price|fee|rate|cost|bill|premium|fare|charge)s?\b"
    r"|\bworth (?:paying|spending|the (?:extra|price|cost|money))\b"
)

# Open questions: "Is there anything else ...?", "What matters most?", "What would the ideal option
# look like?". They invite the user to name a concern, so a passing word does not make them targeted;
# only a fuller match does (``matching.OPEN_THRESHOLD``).
OPEN_FRAME = (
    r"\b(?:anything|something|what) else\b|\bmatters? (?:the )?most\b|\bmost important\b|\btop priorit"
    # superlatives and ideals only in a wh-question: "Is a perfect view a must?" names the view
    r"|\b(?:what|which|how)\b[^?.!]*\b(?:biggest|ideal|perfect|dream|must-haves?|deal-?breakers?)\b"
)
