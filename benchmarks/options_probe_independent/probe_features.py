"""One feature row per candidate option, computed from the visible text and the opening option only.

``build_features`` makes two passes over a bank. Pass 1 (unsupervised, no labels) records, per
(domain, categorical value), the mean within-scenario z-score of price and of rating of the options
that show it. Pass 2 forms each scenario's candidate set (``probe_request.analyse``) and describes
every candidate relative to the other candidates; ``FEATURES`` says what each feature is. The gold
label is used only as the target ``y``.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from probe_request import ROLES, STOPWORDS, ScenarioView, analyse, domain_common_tokens, tokens

EPS = 1e-9  # added to every standard deviation a feature divides by

NEGATIVE_WORDS = re.compile(
    r"\b(no|not|without|won't|only|extra|fee|limited|basic|final sale|non-refundable|curbside|backordered|rotating|"
    r"whoever|unpaid|mandatory|required|paid)\b",
    re.I,
)
POSITIVE_WORDS = re.compile(
    r"\b(free|included|includes|unlimited|verified|same|all|own|dedicated|full|guarantee|lifetime|certified|"
    r"fixed-price|any)\b",
    re.I,
)

# Every feature, with what it is. "Candidates" = the scenario's candidate set (opening excluded);
# "objective" = the role the request ranks by, signed so that higher is better; ranks are 0 = best, 1 = worst.
_ROLE_FEATURES = {
    f"{role}_{kind}": text.format(role=role)
    for role in ROLES
    for kind, text in (
        ("z", "{role} z-scored within the candidates (0 when the scenario has no {role} column)"),
        ("zall", "{role} z-scored within all options"),
        ("vs_open", "{role} minus the opening option's, over the std of {role} across all options"),
    )
}
FEATURES: dict[str, str] = {
    "n_cand": "number of candidates in the scenario",
    "opt_number": "the option's number (1..11)",
    "dist_opening_pos": "|option number - opening option number|",
    "obj_is_price": "1 when the request's objective is price",
    **_ROLE_FEATURES,
    "price_rank": "price rank among candidates (cheapest = 0)",
    "rating_rank": "rating rank among candidates (highest = 0)",
    "obj_rank": "objective rank among candidates",
    "price_rank_all": "price rank among all options",
    "rating_rank_all": "rating rank among all options",
    "obj_rank_all": "objective rank among all options",
    "obj_ordinal": "0-based place on the objective among candidates (stable order on ties)",
    "obj_is_best": "1 when first on the objective among candidates",
    "obj_is_2nd": "1 when second on the objective among candidates",
    "obj_gap_best": "(best candidate's objective - own) / objective std over all options",
    "obj_gap_open": "(own objective - opening option's) / objective std over all options",
    "price_over_bound": "price / the request's price ceiling (0 when none is stated)",
    "nonobj_rank": "rating rank if the objective is price, else price rank (among candidates)",
    "pareto_dominated_by": "candidates at least as cheap and as well rated, and strictly better on one",
    "pareto_front": "1 when no candidate dominates it on (price, rating)",
    "cat_share_mean": "mean over categorical columns of the share of candidates showing its value",
    "cat_share_min": "min over categorical columns of that share",
    "cat_unique_cnt": "categorical columns where no other candidate shows its value",
    "cat_minority_cnt": "categorical columns where under half the candidates show its value",
    "cat_share11_mean": "mean share of all options showing its value, over categorical columns",
    "cat_share11_min": "min share of all options showing its value",
    "cat_unique11_cnt": "categorical columns where it is the only option (of all) with its value",
    "cat_modal_agree": "share of categorical columns where it shows the candidates' modal value",
    "cat_same_open": "share of categorical columns where it shows the opening option's value",
    "open_diff_minshare": "over the columns where it differs from the opening: min candidate share of its value",
    "open_diff_meanshare": "over those columns: mean candidate share of its value",
    "open_diff_open_share": "over those columns: mean candidate share of the opening's value",
    "nn_ham": "Hamming distance (share of categorical columns) to the nearest other candidate(s)",
    "nn_count": "number of nearest other candidates (tied at that distance)",
    "nn_ahead_obj": "1 when it beats every nearest candidate on the objective",
    "nn_ahead_any": "1 when it beats at least one nearest candidate on the objective",
    "nn_obj_gap": "(own objective - best nearest candidate's) / objective std",
    "nn_price_gap": "(own price - cheapest nearest candidate's) / price std",
    "nn_rating_gap": "(own rating - best nearest candidate's) / rating std",
    "twins": "other candidates with identical values in every categorical column",
    "twin_best": "1 when at least as good on the objective as all its twins, 0 when not, -1 when it has none",
    "ham_mean": "mean Hamming distance (share of columns) to the other candidates",
    "rare_grp_obj_best": "1 when best on the objective among candidates sharing its rarest value",
    "grp_best_cnt": "share of categorical columns where it is best on the objective among candidates sharing its value",
    "dom_price_assoc_sum": "sum over its values of the value's domain-wide mean price z-score (pass 1)",
    "dom_price_assoc_max": "max of those",
    "dom_price_assoc_min": "min of those",
    "dom_rating_assoc_sum": "sum over its values of the value's domain-wide mean rating z-score",
    "dom_freq_mean": "mean over its values of the value's frequency among the domain's options",
    "dom_freq_min": "min of those",
    "premium_z": "dom_price_assoc_sum z-scored within the candidates",
    "neg_words": "count of negative words (no, extra, fee, basic, ...) in its categorical values",
    "pos_words": "count of positive words (free, included, unlimited, ...) in its categorical values",
    "posneg": "pos_words - neg_words",
    "posneg_z": "posneg z-scored within the candidates",
    "posneg_rank": "posneg rank among candidates (highest = 0)",
    "req_match_sum": "sum over categorical columns of its value's request-match score",
    "req_match_max": "max of those scores",
    "req_tok_overlap": "tokens of its categorical values found in the request (less stop words and boilerplate)",
    "text_len": "characters in the option's text",
    "name_len": "characters in the option's name",
    "name_has_digit": "1 when the option's name contains a digit",
}
NEIGHBOUR_FEATURES = (
    "nn_ham", "nn_count", "nn_ahead_obj", "nn_ahead_any", "nn_obj_gap", "nn_price_gap", "nn_rating_gap",
    "twins", "twin_best", "ham_mean",
)  # fmt: skip


@dataclass
class FeatureTable:
    """One row per (scenario, candidate); ``groups`` holds the scenario's index.

    ``meta`` per row: ``sid`` (scenario index), ``id``, ``domain``, ``opt`` (0-based option index) and
    ``vals`` (its categorical values, for the target-encoding extra).
    """

    X: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    names: list[str]
    meta: list[dict[str, Any]]
    n_scenarios: int
    mean_candidates: float
    gold_in_candidate_set: float


def rank_pct(values: np.ndarray, better_high: bool) -> np.ndarray:
    """Rank in [0, 1], 0 = best; ties take their mean rank."""
    a = np.asarray(values, float)
    n = len(a)
    if n == 1:
        return np.zeros(1)
    key = -a if better_high else a
    r = np.array([np.sum(key < k) + 0.5 * (np.sum(key == k) - 1) for k in key])
    return r / (n - 1)


@dataclass
class _DomainValueStats:
    price_z: dict[tuple[str, str], float]
    rating_z: dict[tuple[str, str], float]
    count: Counter
    domain_options: Counter


def _domain_value_stats(views: list[tuple[dict[str, Any], ScenarioView]]) -> _DomainValueStats:
    """Pass 1: per (domain, categorical value) mean price / rating z-score and count (no labels)."""
    price_z, rating_z = defaultdict(list), defaultdict(list)
    count: Counter = Counter()
    domain_options: Counter = Counter()
    for scenario, view in views:
        n_options = len(view.rows)
        P = view.numbers["price"]
        R = view.numbers.get("rating", np.zeros(n_options))
        pz = (P - P.mean()) / (P.std() + EPS)
        rz = (R - R.mean()) / (R.std() + EPS)
        for c in view.columns:
            if c.numeric:
                continue
            for i, x in enumerate(c.values):
                key = (scenario["domain"], x)
                price_z[key].append(pz[i])
                rating_z[key].append(rz[i])
                count[key] += 1
        domain_options[scenario["domain"]] += n_options
    return _DomainValueStats(
        {k: np.mean(a) for k, a in price_z.items()}, {k: np.mean(a) for k, a in rating_z.items()}, count, domain_options
    )


def _candidate_features(
    scenario: dict[str, Any], view: ScenarioView, ci: int, stats: _DomainValueStats, common: set[str]
) -> dict[str, float]:
    """The features (``FEATURES``) of candidate ``view.candidates[ci]``."""
    C = view.candidates
    i = int(C[ci])
    n = len(C)
    oi = view.opening_index
    nv = view.numbers
    n_options = len(view.rows)
    opening_number = oi + 1
    ov = nv[view.objective] * (1 if view.direction == "max" else -1)  # objective, higher = better
    P = nv["price"]
    R = nv.get("rating", np.zeros(n_options))
    price_rank, rating_rank, obj_rank = rank_pct(P[C], False), rank_pct(R[C], True), rank_pct(ov[C], True)
    order = np.argsort(-ov[C], kind="stable")
    ordinal = np.empty(n)
    ordinal[order] = np.arange(n)
    price_ceiling = view.bounds.get("price", (None, None))[1]

    f: dict[str, float] = {}
    f["n_cand"] = n
    f["opt_number"] = view.rows[i].number
    f["dist_opening_pos"] = abs(view.rows[i].number - opening_number)
    f["obj_is_price"] = float(view.objective == "price")
    for role in ROLES:
        if role in nv:
            a = nv[role]
            sub = a[C]
            f[f"{role}_z"] = (a[i] - sub.mean()) / (sub.std() + EPS)
            f[f"{role}_zall"] = (a[i] - a.mean()) / (a.std() + EPS)
            f[f"{role}_vs_open"] = (a[i] - a[oi]) / (a.std() + EPS)
        else:
            f[f"{role}_z"] = f[f"{role}_zall"] = f[f"{role}_vs_open"] = 0.0
    f["price_rank"], f["rating_rank"], f["obj_rank"] = price_rank[ci], rating_rank[ci], obj_rank[ci]
    f["price_rank_all"] = rank_pct(P, False)[i]
    f["rating_rank_all"] = rank_pct(R, True)[i]
    f["obj_rank_all"] = rank_pct(ov, True)[i]
    f["obj_ordinal"] = ordinal[ci]
    f["obj_is_best"] = float(ordinal[ci] == 0)
    f["obj_is_2nd"] = float(ordinal[ci] == 1)
    f["obj_gap_best"] = (ov[C].max() - ov[i]) / (ov.std() + EPS)
    f["obj_gap_open"] = (ov[i] - ov[oi]) / (ov.std() + EPS)
    f["price_over_bound"] = P[i] / price_ceiling if price_ceiling else 0.0
    f["nonobj_rank"] = rating_rank[ci] if view.objective == "price" else price_rank[ci]
    dominated_by = sum(
        1 for k in C if k != i and P[k] <= P[i] and R[k] >= R[i] and (P[k] < P[i] or R[k] > R[i])
    )
    f["pareto_dominated_by"] = dominated_by
    f["pareto_front"] = float(dominated_by == 0)

    cat_cols = [c.index for c in view.columns if not c.numeric]
    if cat_cols:
        f.update(_categorical_features(scenario, view, ci, cat_cols, ov, P, R, stats, common))
    f["text_len"] = len(scenario["options"][i]["text"])
    f["name_len"] = len(view.rows[i].name)
    f["name_has_digit"] = float(bool(re.search(r"\d", view.rows[i].name)))
    return f


def _categorical_features(
    scenario: dict[str, Any],
    view: ScenarioView,
    ci: int,
    cat_cols: list[int],
    ov: np.ndarray,
    P: np.ndarray,
    R: np.ndarray,
    stats: _DomainValueStats,
    common: set[str],
) -> dict[str, float]:
    """Features ``cat_*`` .. ``req_tok_overlap``: the categorical columns' structure around the candidate."""
    C = view.candidates
    i = int(C[ci])
    oi = view.opening_index
    domain = scenario["domain"]
    n_cols = len(cat_cols)
    cat = np.array([[view.columns[j].values[k] for j in cat_cols] for k in range(len(view.rows))], dtype=object)
    f: dict[str, float] = {}
    share = np.array([np.mean(cat[C, jj] == cat[i, jj]) for jj in range(n_cols)])
    count = np.array([np.sum(cat[C, jj] == cat[i, jj]) for jj in range(n_cols)])
    share_all = np.array([np.mean(cat[:, jj] == cat[i, jj]) for jj in range(n_cols)])
    f["cat_share_mean"] = share.mean()
    f["cat_share_min"] = share.min()
    f["cat_unique_cnt"] = float(np.sum(count == 1))
    f["cat_minority_cnt"] = float(np.sum(share < 0.5))
    f["cat_share11_mean"] = share_all.mean()
    f["cat_share11_min"] = share_all.min()
    f["cat_unique11_cnt"] = float(np.sum(share_all <= 1 / 11 + 1e-9))
    modal = []
    for jj in range(n_cols):
        vals, cnts = np.unique(cat[C, jj], return_counts=True)
        modal.append(cat[i, jj] == vals[np.argmax(cnts)])
    f["cat_modal_agree"] = float(np.mean(modal))
    same_open = cat[i] == cat[oi]
    f["cat_same_open"] = float(np.mean(same_open))
    diff_cols = np.where(~same_open)[0]
    f["open_diff_minshare"] = share[diff_cols].min() if len(diff_cols) else 1.0
    f["open_diff_meanshare"] = share[diff_cols].mean() if len(diff_cols) else 1.0
    f["open_diff_open_share"] = (
        np.mean([np.mean(cat[C, jj] == cat[oi, jj]) for jj in diff_cols]) if len(diff_cols) else 1.0
    )

    others = [k for k in C if k != i]
    if others:
        ham = np.array([np.sum(cat[k] != cat[i]) for k in others])
        nearest_dist = ham.min()
        nearest = [others[t] for t in np.where(ham == nearest_dist)[0]]
        f["nn_ham"] = nearest_dist / n_cols
        f["nn_count"] = len(nearest)
        f["nn_ahead_obj"] = float(all(ov[i] > ov[k] for k in nearest))
        f["nn_ahead_any"] = float(any(ov[i] > ov[k] for k in nearest))
        f["nn_obj_gap"] = (ov[i] - max(ov[k] for k in nearest)) / (ov.std() + EPS)
        f["nn_price_gap"] = (P[i] - min(P[k] for k in nearest)) / (P.std() + EPS)
        f["nn_rating_gap"] = (R[i] - max(R[k] for k in nearest)) / (R.std() + EPS)
        twins = np.where(ham == 0)[0]
        f["twins"] = float(len(twins))
        f["twin_best"] = float(all(ov[i] >= ov[others[t]] for t in twins)) if len(twins) else -1
        f["ham_mean"] = ham.mean() / n_cols
    else:
        for k in NEIGHBOUR_FEATURES:
            f[k] = 0.0
    rarest = int(np.argmin(share))
    group = [k for k in C if cat[k, rarest] == cat[i, rarest]]
    f["rare_grp_obj_best"] = float(ov[i] >= max(ov[k] for k in group))
    f["grp_best_cnt"] = float(
        np.mean([ov[i] >= max(ov[k] for k in C if cat[k, jj] == cat[i, jj]) for jj in range(n_cols)])
    )

    price_assoc = [stats.price_z[(domain, x)] for x in cat[i]]
    rating_assoc = [stats.rating_z[(domain, x)] for x in cat[i]]
    freq = [stats.count[(domain, x)] / stats.domain_options[domain] for x in cat[i]]
    f["dom_price_assoc_sum"] = np.sum(price_assoc)
    f["dom_price_assoc_max"] = np.max(price_assoc)
    f["dom_price_assoc_min"] = np.min(price_assoc)
    f["dom_rating_assoc_sum"] = np.sum(rating_assoc)
    f["dom_freq_mean"] = np.mean(freq)
    f["dom_freq_min"] = np.min(freq)
    premium = np.array([np.sum([stats.price_z[(domain, x)] for x in cat[k]]) for k in C])
    f["premium_z"] = (np.sum(price_assoc) - premium.mean()) / (premium.std() + EPS)

    text = ", ".join(cat[i])
    f["neg_words"] = len(NEGATIVE_WORDS.findall(text))
    f["pos_words"] = len(POSITIVE_WORDS.findall(text))
    f["posneg"] = f["pos_words"] - f["neg_words"]
    posneg = np.array(
        [len(POSITIVE_WORDS.findall(", ".join(cat[k]))) - len(NEGATIVE_WORDS.findall(", ".join(cat[k]))) for k in C]
    )
    f["posneg_z"] = (f["posneg"] - posneg.mean()) / (posneg.std() + EPS)
    f["posneg_rank"] = rank_pct(posneg, True)[ci]
    scores = [view.match_scores[j][i] for j in cat_cols]
    f["req_match_sum"] = float(np.sum(scores))
    f["req_match_max"] = float(np.max(scores))
    request_tokens = tokens(scenario["request"]) - STOPWORDS - common
    f["req_tok_overlap"] = len((tokens(text) - STOPWORDS) & request_tokens)
    return f


def build_features(visible: list[dict[str, Any]], labels: dict[str, dict[str, Any]]) -> FeatureTable:
    """The feature table of a bank: ``visible`` scenarios (file order), ``labels`` by id (gold, opening)."""
    common_by_domain = domain_common_tokens(visible)
    views = [
        (v, analyse(v, labels[v["id"]]["opening"], common_by_domain[v["domain"]])) for v in visible
    ]
    stats = _domain_value_stats(views)
    rows, y, groups, meta = [], [], [], []
    n_candidates, gold_in = [], 0
    for sid, (v, view) in enumerate(views):
        gold_index = labels[v["id"]]["gold"] - 1
        n_candidates.append(len(view.candidates))
        gold_in += gold_index in view.candidates
        cat_cols = [c.index for c in view.columns if not c.numeric]
        for ci, i in enumerate(view.candidates):
            f = _candidate_features(v, view, ci, stats, common_by_domain[v["domain"]])
            unknown = set(f) - set(FEATURES)
            assert not unknown, f"undocumented features: {sorted(unknown)}"
            rows.append(f)
            y.append(int(i == gold_index))
            groups.append(sid)
            values = [str(view.columns[j].values[i]) for j in cat_cols]
            meta.append({"sid": sid, "id": v["id"], "domain": v["domain"], "opt": int(i), "vals": values})
    names = sorted({k for f in rows for k in f})
    X = np.array([[f.get(k, 0.0) for k in names] for f in rows], float)
    return FeatureTable(
        X, np.array(y), np.array(groups), names, meta, len(views), float(np.mean(n_candidates)), gold_in / len(views)
    )
