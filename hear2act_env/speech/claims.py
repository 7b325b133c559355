"""Claims about the user's voice: the parser that finds them in words, and the one checker of them.

Two kinds of claim meet the waveform here, and this module is their only home:

* :class:`~hear2act_env.speech.features.Evidence` -- a perceiver's cited
  measurement (feature, value, unit, span, source). :func:`check_evidence`
  re-derives it from the clip, following the deterministic checks of
  evidence-grounded emotion reasoning (seed paper 002, §3.2.1), without judging
  whether the interpretation is right:

  * provenance: the source is a known extractor, the feature and unit are ones
    it produces;
  * span: inside the clip, start < end, and (for measured spans) within
    ``SPAN_TOL`` seconds of the span the extractor itself reports;
  * value: within 15 % relative tolerance of the re-derived value. Values near
    zero make a relative test meaningless (a +0.1 st final movement re-derived
    as +0.12 st is 20 % off), so each unit also has a small absolute floor,
    ``ABS_FLOOR``; a claim passes when it is within either.

  A failed claim is attributed to the component that produced it ("perceiver"
  for a wrong value or span, "provenance" for an unknown source/feature/unit).

* :class:`Claim` -- what a reasoning trace says about the voice, in words
  ("her pitch falls", "slow", "f0_range = 6.2 st"). :func:`acoustic_claims`
  finds them (quoted text and option words such as "fast shipping" are not
  claims); :func:`check_claim` tells whether one is true of the re-derived
  features (qualitative words against thresholds with the same 15 % tolerance; a
  cited value with a span goes through :func:`check_evidence` whole).
  :data:`BASE_RATES` says how often each qualitative claim is true of a user
  turn by chance; :func:`clip_features` re-derives (and caches) a clip's features.

:mod:`hear2act_env.speech.verify` checks a perceiver's evidence with it;
``hear2act.training.rewards`` scores a model's reasoning with it (the
``evidence`` reward).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..protocol import PERCEPTION_FIGURES
from .features import NAMES, UNITS, AcousticFeatures, Evidence, extract
from .perceiver import WEIGHTS

REL_TOL = 0.15
SPAN_TOL = 0.03  # seconds: three analysis frames
ABS_FLOOR = {"Hz": 1.0, "st": 0.25, "st/s": 0.25, "dB": 0.5, "syll/s": 0.2, "s": 0.02}
SOURCES = {"praat": frozenset((*NAMES, "pause"))}


# -- cited measurements (a perceiver's Evidence) ---------------------------------------------------------------
@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on one cited measurement."""

    claim: Evidence
    passed: bool
    reason: str  # "" when passed
    derived: float | None
    component: str  # who is to blame when it failed


def within(claimed: float, derived: float, unit: str, rel_tol: float = REL_TOL) -> bool:
    """Relative tolerance, or the unit's absolute floor for values near zero.

    >>> within(110.0, 100.0, "Hz"), within(0.1, 0.0, "st"), within(0.3, 0.0, "st")
    (True, True, False)
    """
    diff = abs(claimed - derived)
    return diff <= rel_tol * abs(derived) + 1e-9 or diff <= ABS_FLOOR.get(unit, 0.0) + 1e-9


def _span_ok(span: tuple[float, float], duration: float) -> str:
    a, b = span
    if not (np.isfinite(a) and np.isfinite(b)):
        return "span is not finite"
    if a < -1e-9 or b > duration + SPAN_TOL:
        return f"span {a:.3f}-{b:.3f} s lies outside the clip (0-{duration:.3f} s)"
    if b < a:
        return f"span ends before it starts ({a:.3f} > {b:.3f})"
    return ""


def _derived_span(feature: str, f: AcousticFeatures) -> tuple[float, float]:
    if feature == "f0_final":
        return f.final_span
    if feature == "lead_pause":
        return (0.0, f.lead_pause)
    if feature == "pause_total":
        return (0.0, f.duration)
    return f.speech_span


def check_evidence(claim: Evidence, f: AcousticFeatures, rel_tol: float = REL_TOL) -> ClaimCheck:
    """One cited measurement against the re-derived features of its clip."""
    known = SOURCES.get(claim.source)
    if known is None:
        return ClaimCheck(claim, False, f"unknown source {claim.source!r}", None, "provenance")
    if claim.feature not in known:
        reason = f"{claim.source} does not produce {claim.feature!r}"
        return ClaimCheck(claim, False, reason, None, "provenance")
    unit = "s" if claim.feature == "pause" else UNITS[claim.feature]
    if claim.unit != unit:
        return ClaimCheck(claim, False, f"unit {claim.unit!r}, expected {unit!r}", None, "provenance")
    bad_span = _span_ok(claim.span, f.duration)
    if bad_span:
        return ClaimCheck(claim, False, bad_span, None, "perceiver")
    if claim.feature == "pause":
        a, b = claim.span
        overlap = max((min(b, pb) - max(a, pa) for pa, pb in f.pauses), default=0.0)
        if overlap < (1 - rel_tol) * (b - a):
            return ClaimCheck(claim, False, f"no silence at {a:.3f}-{b:.3f} s", overlap, "perceiver")
        derived = b - a
    else:
        derived = float(getattr(f, claim.feature))
        da, db = _derived_span(claim.feature, f)
        if abs(claim.span[0] - da) > SPAN_TOL or abs(claim.span[1] - db) > SPAN_TOL:
            return ClaimCheck(claim, False, f"span {claim.span} differs from the measured {(da, db)}",
                              derived, "perceiver")
    if not within(claim.value, derived, unit, rel_tol):
        return ClaimCheck(claim, False, f"value {claim.value:.3f} {unit} vs re-derived {derived:.3f}",
                          derived, "perceiver")
    return ClaimCheck(claim, True, "", derived, "")


# -- claims in words ------------------------------------------------------------------------------------------
# Quoted text (the user's words, option names) is never a claim, nor the assistant's decision (rewards).
QUOTED = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|(?<![\w])'[^']*'(?![\w])")


@dataclass(frozen=True)
class Claim:
    """One acoustic claim found in a reasoning trace."""

    phrase: str  # the words that made it
    feature: str  # a feature of hear2act_env.speech.features (or f0_rel / rms_rel, relative to the voice)
    op: str  # "<=", ">=" (a qualitative claim against a threshold) or "=" (a cited value)
    value: float
    unit: str = ""
    span: tuple[float, float] | None = None  # seconds, when a cited value names where it was measured


# Qualitative claims: (pattern, feature, op, threshold). Thresholds sit about one standard deviation from the
# mean of the hibari perceiver's training clips (data/perceiver-hibari.json); level claims (low/high pitch,
# quiet/loud) are relative to the voice's enrolled neutral baseline.
_P = r"(?:pitch|intonation|tone|voice|f0)"
QUALITATIVE: tuple[tuple[str, str, str, float], ...] = (
    (rf"{_P}\W+(?:\w+\W+){{0,3}}(?:falls?|falling|drops?|dropping|goes down|dips?)|"
     r"(?:falling|dropping|downward) (?:pitch|intonation|tone)", "f0_final", "<=", -1.0),
    (rf"{_P}\W+(?:\w+\W+){{0,3}}(?:rises?|rising|goes up)|(?:rising|upward) (?:pitch|intonation|tone)|"
     r"upspeak", "f0_final", ">=", 1.0),
    (r"monoton\w*|flat (?:pitch|intonation|tone|voice|delivery)|narrow (?:pitch )?range", "f0_range", "<=", 5.0),
    (r"(?:lively|animated|expressive|varied|wide) (?:pitch|intonation|tone|voice|range)", "f0_range", ">=", 8.5),
    (r"\bslow(?:ly|er)?\b|drawn[- ]out|dragg\w*", "speech_rate", "<=", 4.0),
    (r"\bfast\b|\bquick(?:ly)? (?:speech|pace)|\brapid\w*|\bbrisk\w*", "speech_rate", ">=", 5.2),
    (r"long pause|paus\w* before|hesitat\w* before|delay\w* before|took a (?:moment|while)", "lead_pause", ">=",
     0.6),
    (r"low (?:energy|volume|intensity)|\bquiet(?:ly)?\b|\bsoft(?:ly)?\b|subdued", "rms_rel", "<=", -1.5),
    (r"high (?:energy|volume|intensity)|\bloud(?:ly)?\b|energetic", "rms_rel", ">=", 1.5),
    (r"low(?:er)? pitch|deep(?:er)? voice", "f0_rel", "<=", -1.0),
    (r"high(?:er)? pitch", "f0_rel", ">=", 1.0),
)
_QUALITATIVE = tuple((re.compile(p, re.IGNORECASE), f, op, v) for p, f, op, v in QUALITATIVE)
# Cited values: feature names as the verifier writes them, or the perceiver sentence's wording (the figures of
# hear2act_env.protocol.PERCEPTION_FIGURES: named before their number, or, like "4.2 syllables/s", after it). Only
# figures in st are cited this way (the loudness figure, dB over the turn, is not a verifier feature).
_SENTENCE_BEFORE = {phrase: feature for feature, phrase, unit, after in PERCEPTION_FIGURES
                    if not after and unit == "st"}
_SENTENCE_AFTER = {phrase: feature for feature, phrase, _, after in PERCEPTION_FIGURES if after}
_ALIASES = {**_SENTENCE_BEFORE, "mean pitch": "f0_mean", "pitch slope": "f0_slope", "speech rate": "speech_rate",
            **_SENTENCE_AFTER, "s before speaking": "lead_pause"}
_NUM = r"([+-]?\d+(?:\.\d+)?)"
_CITED = re.compile(r"\b(f0_mean|f0_range|f0_slope|f0_final|rms|speech_rate|lead_pause|pause_total|tilt|"
                    + "".join(re.escape(p) + "|" for p in _SENTENCE_BEFORE)
                    + r"mean pitch|pitch slope|speech rate)\s*(?:[=:]|of|is|was)?\s*"
                    + _NUM + r"\s*(Hz|st/s|st|dB|syll/s|"
                    + "".join(re.escape(p) + "|" for p in _SENTENCE_AFTER) + r"s)\b"
                    r"(?:\s*(?:@|at|over|from|in)\s*" + _NUM + r"\s*(?:-|to)\s*" + _NUM + r"\s*s\b)?",
                    re.IGNORECASE)
_CITED_AFTER = re.compile(_NUM + r"\s*(" + "".join(re.escape(p) + "|" for p in _SENTENCE_AFTER)
                          + r"s before speaking)", re.IGNORECASE)
REL_MARGIN = 0.15  # the 15 % tolerance of the deterministic checks (seed paper 002)


# A qualitative word is a claim about the user's voice only when its clause says so: words that name the voice are
# claims by themselves (pitch, intonation, pause, energy ...); bare adjectives (slow, fast, quiet, soft, loud) need a
# speech word in the same sentence ("she spoke slowly"), so option words ("fast shipping", "quiet keyboard") are not.
# Quoted text (the user's words, option names) is never a claim.
_VOICE_WORD = re.compile(r"pitch|intonation|tone|voice|f0|upspeak|monoton|range|paus|hesitat|delay|energy|volume|"
                         r"intensity|drawn|dragg|took a", re.IGNORECASE)
_SPEECH_ANCHOR = re.compile(r"\b(sound\w*|voice|tone|pitch|intonation|spoke|speak\w*|speech|said|says|talk\w*|pace|"
                            r"delivered|replied|answered|responded)\b", re.IGNORECASE)


def _blank_quotes(text: str) -> str:
    return QUOTED.sub(lambda m: " " * len(m.group(0)), text)


def _sentence_at(text: str, start: int) -> str:
    left = max(text.rfind(p, 0, start) for p in ".!?\n")
    ends = [i for i in (text.find(p, start) for p in ".!?\n") if i >= 0]
    return text[left + 1:min(ends) if ends else len(text)]


def acoustic_claims(reasoning: str) -> list[Claim]:
    """Every claim about the user's voice in a reasoning trace, qualitative or a cited value.

    >>> [c.feature for c in acoustic_claims('She wants "fast shipping" and a quiet keyboard. She spoke slowly.')]
    ['speech_rate']

    >>> [(c.feature, c.op, c.value) for c in acoustic_claims("Her pitch falls at the end; slow, low energy.")]
    [('f0_final', '<=', -1.0), ('speech_rate', '<=', 4.0), ('rms_rel', '<=', -1.5)]
    >>> [(c.feature, c.value, c.unit) for c in acoustic_claims("f0_range = 6.2 st and 0.52 s before speaking")]
    [('f0_range', 6.2, 'st'), ('lead_pause', 0.52, 's')]
    >>> acoustic_claims("f0_final -2.1 st over 1.20-1.55 s")[0].span
    (1.2, 1.55)
    """
    reasoning = _blank_quotes(reasoning)
    found: list[tuple[int, Claim]] = []
    for pattern, feature, op, value in _QUALITATIVE:
        for m in pattern.finditer(reasoning):
            if _VOICE_WORD.search(m.group(0)) or _SPEECH_ANCHOR.search(_sentence_at(reasoning, m.start())):
                found.append((m.start(), Claim(m.group(0), feature, op, value)))
    for m in _CITED.finditer(reasoning):
        name = m.group(1).lower()
        unit = {"syllables/s": "syll/s"}.get(m.group(3), m.group(3))
        span = (float(m.group(4)), float(m.group(5))) if m.group(4) is not None else None
        found.append((m.start(), Claim(m.group(0), _ALIASES.get(name, name), "=", float(m.group(2)), unit, span)))
    for m in _CITED_AFTER.finditer(reasoning):
        unit = "s" if "before" in m.group(2).lower() else "syll/s"
        found.append((m.start(), Claim(m.group(0), _ALIASES[m.group(2).lower()], "=", float(m.group(1)), unit)))
    seen, claims = set(), []
    for _, c in sorted(found, key=lambda x: x[0]):
        key = (c.feature, c.op, c.value)
        if key not in seen:  # one claim counts once however often it is repeated
            seen.add(key)
            claims.append(c)
    return claims


@lru_cache(maxsize=1)
def _baseline() -> tuple[float, float]:
    """The hibari voice's enrolled neutral (f0 in Hz, rms in dB): what level claims are relative to."""
    meta = json.loads(WEIGHTS.read_text(encoding="utf-8"))["meta"]["baseline"]
    return float(meta["f0"]), float(meta["rms"])


_FEATURE_CACHE: dict[str, AcousticFeatures] = {}


def clip_features(audio: np.ndarray) -> AcousticFeatures:
    """Re-derived features of one 16 kHz clip, cached by content (the K completions of a group share it)."""
    arr = np.ascontiguousarray(np.asarray(audio, dtype=np.float32))
    key = hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest()
    if key not in _FEATURE_CACHE:
        if len(_FEATURE_CACHE) > 256:
            _FEATURE_CACHE.clear()
        _FEATURE_CACHE[key] = extract(arr, 16_000)
    return _FEATURE_CACHE[key]


def check_claim(claim: Claim, features: AcousticFeatures, baseline: tuple[float, float] | None = None) -> bool:
    """Is the claim true of the re-derived features? Thresholds and cited values get the 15 % tolerance.

    ``baseline`` (f0 Hz, rms dB) is what level claims (``f0_rel``, ``rms_rel``) are relative to; by default the
    enrolled neutral of the shipped perceiver's voice.
    """
    f0_base, rms_base = baseline or _baseline()
    if claim.feature == "f0_rel":
        derived = 12 * math.log2(features.f0_mean / f0_base) if features.f0_mean > 0 else 0.0
    elif claim.feature == "rms_rel":
        derived = features.rms - rms_base
    else:
        derived = float(getattr(features, claim.feature))
    if claim.op == "=" and claim.span is not None:
        return check_evidence(Evidence(claim.feature, claim.value, claim.unit, claim.span), features).passed
    if claim.op == "=":
        return claim.unit == UNITS.get(claim.feature, claim.unit) and within(claim.value, derived, claim.unit)
    margin = REL_MARGIN * abs(claim.value)
    return derived <= claim.value + margin if claim.op == "<=" else derived >= claim.value - margin


# How often each qualitative claim is true of a user turn by base rate (hibari, prosody realization; measured by
# benchmarks/evidence_base_rates.py on 99 user turns of 60 training-split episodes, state-rule, seeds 0-59).
BASE_RATES: dict[tuple[str, str, float], float] = {
    ("f0_final", "<=", -1.0): 0.465, ("f0_final", ">=", 1.0): 0.212, ("f0_range", "<=", 5.0): 0.242,
    ("f0_range", ">=", 8.5): 0.475, ("speech_rate", "<=", 4.0): 0.495, ("speech_rate", ">=", 5.2): 0.616,
    ("lead_pause", ">=", 0.6): 0.525, ("rms_rel", "<=", -1.5): 0.253, ("rms_rel", ">=", 1.5): 0.303,
    ("f0_rel", "<=", -1.0): 0.283, ("f0_rel", ">=", 1.0): 0.313,
}
CITED_BASE_RATE = 0.1  # a cited value within the 15 % tolerance by chance (assumed, not measured)


def base_rate(claim: Claim) -> float:
    """How often the claim holds of a user turn by chance (:data:`BASE_RATES`; cited values: 0.1)."""
    return CITED_BASE_RATE if claim.op == "=" else BASE_RATES.get((claim.feature, claim.op, claim.value), 0.5)


__all__ = [
    "ABS_FLOOR",
    "BASE_RATES",
    "CITED_BASE_RATE",
    "QUALITATIVE",
    "QUOTED",
    "REL_MARGIN",
    "REL_TOL",
    "SOURCES",
    "SPAN_TOL",
    "Claim",
    "ClaimCheck",
    "acoustic_claims",
    "base_rate",
    "check_claim",
    "check_evidence",
    "clip_features",
    "within",
]
