"""What the request asks for, read from its text: the objective, numeric bounds, required values.

From these the probe forms the candidate set: the options that meet every bound and requirement it
can read from the request, less the opening option (the user already turned it down).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from probe_parse import Column, OptionRow, first_number, parse_options

# Words near a price in the request that make it a ceiling ("under $200", "only have $200").
BOUND_WORDS = re.compile(
    r"(under|at most|or less|or under|or below|or lower|up to|no more than|no higher than|nothing over|go over|"
    r"go past|budget|only have|limit|ceiling|spend|covers?|pay|afford|stay|less than|keep it|charging \S+ or|"
    r"for \$|at \$|manage|is fine|costs?)",
    re.I,
)
STOPWORDS = frozenset(
    "a an the and or of to for in on at with by from is it its be that this my our your i we me you who whats what "
    "which one ones only all any per no not but as up about are can get find need want like just so if than do does "
    "has have".split()
)
NEGATIONS = frozenset({"no", "not", "without", "won't", "never"})
ROLES = ("price", "rating", "days", "miles", "battery")
Bounds = dict[str, tuple[float | None, float | None]]  # role -> (lower, upper); a missing side is None


def objective(request: str) -> tuple[str, str]:
    """The numeric role the request ranks by and its direction (``"min"`` or ``"max"``)."""
    t = request.lower().replace("at least", "")
    if re.search(r"soonest|earliest", t):
        return "days", "min"
    if re.search(r"longest", t):
        return "battery", "max"
    if re.search(r"closest|nearest", t):
        return "miles", "min"
    if re.search(r"cheapest|lowest|least|affordable|cheap\b|inexpensive", t):
        return "price", "min"
    return "rating", "max"  # best / top / highest / reviews / acclaimed / placement


def numeric_roles(columns: list[Column]) -> dict[str, int]:
    """Role name (rating, days, battery, miles, price) -> index of the numeric column that plays it."""
    out = {}
    for c in columns:
        if not c.numeric:
            continue
        t = c.template or ""
        if re.search(r"rated|score|employed", t):
            out["rating"] = c.index
        elif "opening" in t:
            out["days"] = c.index
        elif "battery" in t:
            out["battery"] = c.index
        elif "miles" in t:
            out["miles"] = c.index
        else:
            out["price"] = c.index
    return out


def request_bounds(request: str, columns: list[Column], roles: dict[str, int]) -> Bounds:
    """Role -> (lower, upper) bound the request states; a missing side is ``None``.

    Price: the smallest number of the price column's kind ($ or %) within a factor 4 of the listed
    prices, preferring those with a ceiling word nearby. Rating: "rated 4 or higher", "at least 80% of
    graduates employed". Miles / days: "within N miles", "within N days".
    """
    bounds: Bounds = {}
    price_col = columns[roles["price"]]
    prices = [first_number(x) for x in price_col.values]
    is_dollar = price_col.values[0].startswith("$")
    is_percent = "%" in (price_col.template or "")
    found = []  # (has a ceiling word nearby, value)
    for m in re.finditer(r"(\$)?(\d[\d,]*(?:\.\d+)?)(\s*%)?( million)?", request):
        val = float(m.group(2).replace(",", ""))
        if m.group(4):
            val *= 1e6
        if is_dollar and not m.group(1):
            continue
        if is_percent and not m.group(3):
            continue
        if not (min(prices) / 4 <= val <= max(prices) * 4):
            continue
        context = request[max(0, m.start() - 25) : m.end() + 20]
        if re.search(r"annual fee", request[m.end() : m.end() + 3] + request[max(0, m.start() - 15) : m.start()]):
            continue
        found.append((bool(BOUND_WORDS.search(context)), val))
    if found:
        with_word = [v for w, v in found if w]
        bounds["price"] = (None, min(with_word) if with_word else min(v for _, v in found))
    if "rating" in roles:
        rating_max = max(first_number(x) for x in columns[roles["rating"]].values)
        for m in re.finditer(r"(?<![\$\d.,])(\d+(?:\.\d+)?)(?![\d.,]*\s*%)", request):
            val = float(m.group(1))
            context = request[max(0, m.start() - 40) : m.end() + 30].lower()
            if not re.search(r"rated|rating|stars|score|critic|graduates|employ", context):
                continue
            if not re.search(r"at least|or higher|or better|below|minimum|\+", context):
                continue
            if rating_max <= 5 and not (1 <= val <= 5):
                continue
            if rating_max > 5 and not (val > 5):
                continue
            bounds["rating"] = (val, None)  # the last qualifying number wins
        m = re.search(r"at least (\d+)% of grad", request)
        if m:
            bounds["rating"] = (float(m.group(1)), None)
    if "miles" in roles:
        m = re.search(r"within (\d+(?:\.\d+)?) miles", request)
        if m:
            bounds["miles"] = (None, float(m.group(1)))
    if "days" in roles:
        m = re.search(r"within (\d+) days", request)
        if m:
            bounds["days"] = (None, float(m.group(1)))
    return bounds


def tokens(text: str) -> set[str]:
    """Lower-cased word set with possessive ``'s`` and a plural ``s`` stripped."""
    out = set()
    for word in re.findall(r"[a-z0-9][a-z0-9\-']*", text.lower()):
        w = word.strip("'")
        if w.endswith("'s"):
            w = w[:-2]
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def domain_common_tokens(visible: Iterable[dict[str, Any]], frac: float = 0.3) -> dict[str, set[str]]:
    """Domain -> tokens found in at least ``frac`` of that domain's requests (boilerplate, not a requirement)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    n: Counter = Counter()
    for v in visible:
        n[v["domain"]] += 1
        for t in tokens(v["request"]):
            counts[v["domain"]][t] += 1
    return {d: {t for t, c in cnt.items() if c >= frac * n[d]} for d, cnt in counts.items()}


def required_columns(
    request: str, columns: list[Column], common: set[str], trigger: float = 0.99, keep: float = 0.5
) -> tuple[dict[int, list[bool]], dict[int, list[float]]]:
    """Categorical columns the request pins down, and every categorical column's match scores.

    A value's match score is the share of its distinctive words (not shared by every option's value
    in that column, not stop words) that appear in the request (less domain boilerplate). When some
    value matches fully (>= ``trigger``), the column is required: options whose value scores >= ``keep``
    pass ("one stop at most" also passes "nonstop"). "at least N GB" filters a column of "N GB" values.
    Returns (column index -> pass mask, column index -> match score per option).
    """
    request_tokens = tokens(request) - STOPWORDS - common
    required: dict[int, list[bool]] = {}
    scores: dict[int, list[float]] = {}
    for c in columns:
        if c.numeric:
            continue
        value_tokens = [tokens(x) for x in c.values]
        shared = set.intersection(*value_tokens)
        sc = []
        for t in value_tokens:
            distinctive = (t - shared) - STOPWORDS
            if not distinctive:
                sc.append(0.0)
                continue
            hits = [w for w in distinctive & request_tokens if len(w) >= 3 and not w.isdigit()]
            sc.append(len(hits) / len(distinctive))
        scores[c.index] = sc
        if max(sc) >= trigger:
            ok = [s >= keep for s in sc]
            if re.search(r"one stop at most", request, re.I):
                ok = [o or v == "nonstop" for o, v in zip(ok, c.values, strict=True)]
            if 0 < sum(ok) < len(sc):
                required[c.index] = ok
    m = re.search(r"at least (\d+) ?GB", request)
    if m:
        for c in columns:
            if c.numeric or not all(re.search(r"\d+ GB", x) for x in c.values):
                continue
            ok = [float(re.search(r"(\d+) GB", x).group(1)) >= float(m.group(1)) for x in c.values]
            if 0 < sum(ok) < len(ok):
                required[c.index] = ok
    return required, scores


@dataclass
class ScenarioView:
    """Everything the probe reads from one scenario's visible text (and the opening option)."""

    rows: list[OptionRow]
    columns: list[Column]
    roles: dict[str, int]
    numbers: dict[str, np.ndarray]  # role -> value per option
    objective: str
    direction: str  # "max" or "min"
    bounds: Bounds
    required: dict[int, list[bool]]
    match_scores: dict[int, list[float]]
    opening_index: int  # 0-based
    candidates: np.ndarray  # 0-based option indices, ascending


def analyse(scenario: dict[str, Any], opening: int, common: set[str]) -> ScenarioView:
    """Parse a visible scenario, read its request, and form the candidate set.

    Candidates: options within every stated bound and with every required value, less the opening
    option (``opening`` is its 1-based number); when none is left, every option but the opening.
    """
    rows, columns = parse_options(scenario)
    roles = numeric_roles(columns)
    request = scenario["request"]
    obj, direction = objective(request)
    if obj not in roles:
        obj, direction = "rating", "max"
    bounds = request_bounds(request, columns, roles)
    required, scores = required_columns(request, columns, common)
    numbers = {role: np.array([first_number(x) for x in columns[j].values]) for role, j in roles.items()}
    n_options = len(rows)
    ok = np.ones(n_options, bool)
    for role, (lo, hi) in bounds.items():
        if lo is not None:
            ok &= numbers[role] >= lo
        if hi is not None:
            ok &= numbers[role] <= hi
    for mask in required.values():
        ok &= np.array(mask)
    opening_index = opening - 1
    ok[opening_index] = False
    candidates = np.where(ok)[0]
    if len(candidates) == 0:
        candidates = np.array([i for i in range(n_options) if i != opening_index])
    return ScenarioView(
        rows, columns, roles, numbers, obj, direction, bounds, required, scores, opening_index, candidates
    )

