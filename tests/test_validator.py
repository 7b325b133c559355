"""The structural validator: mutate a valid scenario rule by rule, expect the matching error."""

from __future__ import annotations

import copy
import json

import pytest

from hear2act_env import Scenario, ScenarioError, load_scenarios, validate
from hear2act_env.cli import main as cli_main
from hear2act_env.scenarios.content import DOMAINS_DIR, parse_domain
from hear2act_env.scenarios.validate import problems, validate_file

AIRLINE = DOMAINS_DIR / "budget-airline-tickets.json"


@pytest.fixture(scope="module")
def valid() -> dict:
    return load_scenarios()[0].to_dict()


def _errors(d: dict) -> list[str]:
    return [str(e) for e in problems(Scenario.from_dict(d))]


def _role_index(d: dict, role: str) -> int:
    s = Scenario.from_dict(d)
    number = {"gold": s.gold, "safe": s.safe, "opening": s.opening}[role]
    return number - 1


def _mutate(valid: dict, fn) -> dict:
    d = copy.deepcopy(valid)
    fn(d)
    return d


def test_valid_scenario_has_no_problems(valid):
    assert _errors(valid) == []
    s = Scenario.from_dict(valid)
    assert validate(s) is s


def _set_priority(d, idx, value):
    d["options"][idx]["values"][d["priority"]] = value


def _priority_of(d, idx):
    return d["options"][idx]["values"][d["priority"]]


MUTATIONS = {
    "eleven options": (lambda d: d["options"].pop(), "exactly 11 options"),
    "numbering": (lambda d: d["options"][0].update(number=5), "numbered 1..11"),
    "three needs": (lambda d: d["needs"].pop(), "exactly 3 needs"),
    "need levels": (lambda d: d["needs"][0].update(level=2), "levels must be 1, 2, 3"),
    "distinct need attributes": (
        lambda d: d["needs"][1].update(
            attribute=d["needs"][0]["attribute"], accept=d["needs"][0]["accept"]
        ),
        "three different attributes",
    ),
    "proper subset": (
        lambda d: d["needs"][2].update(
            accept=next(a["values"] for a in d["attributes"] if a["name"] == d["needs"][2]["attribute"])
        ),
        "proper subset",
    ),
    "L1 hint": (lambda d: d["needs"][0].update(hint=""), "directional hint"),
    "need keywords": (lambda d: d["needs"][1].update(keywords=[]), "targeted"),
    "distractor": (
        lambda d: d.update(attributes=[a for a in d["attributes"] if a["kind"] != "distractor"]),
        "distractor",
    ),
    "vocabulary": (
        lambda d: d["options"][0]["values"].update({d["needs"][0]["attribute"]: "teleportation"}),
        "not in the vocabulary",
    ),
    "description mentions values": (
        lambda d: d["options"][3].update(description=d["options"][3]["name"] + ": a fine choice"),
        "does not mention",
    ),
    "request requirement": (lambda d: d.update(requirements=[]), "at least one visible requirement"),
    "priority is visible": (
        lambda d: d.update(priority=d["needs"][0]["attribute"]), "not a numeric visible attribute"
    ),
    "template artefact": (lambda d: d.update(request="I want the {cheapest} one"), "bracket or brace"),
    "placeholder word": (lambda d: d["needs"][1].update(statement="TODO"), "placeholder"),
    # A domain outside Table 6 is a user domain (docs/new-domain.md): its ids carry its own slug.
    "user domain's ids": (lambda d: d.update(domain="space tourism"), "must start with the domain slug 'space-tou"),
    "Table 6 family": (lambda d: d.update(family="Home & Property"), "belongs to 'Travel & Events'"),
    "id format": (lambda d: d.update(id="Budget Airline 1"), "domain-slug"),
}


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_each_rule_is_enforced(valid, rule):
    fn, expected = MUTATIONS[rule]
    errors = _errors(_mutate(valid, fn))
    assert any(expected in e for e in errors), errors
    assert all(e.startswith(valid["id"]) or e.startswith("Budget") for e in errors)


def test_two_golds_is_rejected(valid):
    def tie(d):
        _set_priority(d, _role_index(d, "safe"), _priority_of(d, _role_index(d, "gold")))

    errors = _errors(_mutate(valid, tie))
    assert any("no unique gold" in e for e in errors), errors


def test_request_violator_that_meets_the_request_is_rejected(valid):
    s = Scenario.from_dict(valid)
    v = s.request_violating[0] - 1

    def fix(d):
        d["options"][v]["values"] = dict(d["options"][_role_index(d, "gold")]["values"])

    errors = _errors(_mutate(valid, fix))
    assert any("exactly 2 options must violate the request" in e for e in errors), errors


def test_opening_that_fits_every_need_is_rejected(valid):
    def fits(d):
        o = _role_index(d, "opening")
        g = _role_index(d, "gold")
        for n in d["needs"]:
            d["options"][o]["values"][n["attribute"]] = d["options"][g]["values"][n["attribute"]]

    errors = _errors(_mutate(valid, fits))
    assert any("opening option (the request-meeting leader) must miss at least one" in e for e in errors), errors


def test_opening_that_misses_only_l1_is_valid():
    s = next(s for s in load_scenarios() if s.option(s.opening).pattern == "011")
    assert _errors(s.to_dict()) == []


def test_opening_tie_is_rejected(valid):
    def tie(d):
        s = Scenario.from_dict(d)
        meeting = sorted((o for o in s.options if o.meets_request), key=s._rank_key)
        _set_priority(d, meeting[1].number - 1, _priority_of(d, meeting[0].number - 1))

    errors = _errors(_mutate(valid, tie))
    assert any("lead" in e for e in errors), errors


def test_missing_field_names_the_field(valid):
    d = copy.deepcopy(valid)
    del d["needs"][0]["statement"]
    with pytest.raises(ScenarioError, match=r"needs\[0\]\.statement: missing") as info:
        Scenario.from_dict(d)
    assert info.value.scenario_id == valid["id"]


def test_bad_file_reports_every_bad_line_with_its_number(tmp_path, valid, capsys):
    good = json.dumps(valid)
    broken = copy.deepcopy(valid)
    broken["options"].pop()
    also_broken = copy.deepcopy(valid)
    also_broken["id"] = valid["id"][:-2] + "02"
    also_broken["needs"][0]["hint"] = ""
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join([good, "{not json", json.dumps(broken), json.dumps(also_broken)]) + "\n")
    errors = validate_file(path)
    lines = {e.line for e in errors}
    assert lines == {2, 3, 4}
    assert any("line 4" in str(e) and "hint" in str(e) for e in errors)
    with pytest.raises(ScenarioError, match="line 2"):
        load_scenarios(path)
    assert cli_main(["scenarios", "validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "line 2" in out and "line 3" in out and "line 4" in out
    assert "1 valid" in out


def test_duplicate_ids_in_a_file_are_reported(tmp_path, valid):
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(valid) + "\n" + json.dumps(valid) + "\n")
    errors = validate_file(path)
    assert [e.line for e in errors] == [2]
    assert "duplicate of line 1" in str(errors[0])


def test_domain_content_errors_name_file_and_field():
    raw = json.loads(AIRLINE.read_text())
    raw["personas"][3]["needs"][1]["accept"] = ["teleport"]
    with pytest.raises(ScenarioError, match=r"x\.json: personas\[3\]\.needs\[1\]\.accept"):
        parse_domain(raw, "x.json")
    raw = json.loads(AIRLINE.read_text())
    raw["personas"].pop()
    with pytest.raises(ScenarioError, match="exactly 10 personas"):
        parse_domain(raw, "x.json")


# -- strict types: no silent coercion; every error names line, scenario and field ---------


def _price_attr(d: dict) -> str:
    return next(a["name"] for a in d["attributes"] if a["kind"] == "visible" and "values" not in a)


STRICT = {
    "keywords as a string": (lambda d: d["needs"][0].update(keywords="train"), "needs[0].keywords", "list of strings"),
    "keyword not a string": (lambda d: d["needs"][1].update(keywords=[1, "x"]), "needs[1].keywords[0]", "string"),
    "level as a float": (lambda d: d["needs"][2].update(level=3.9), "needs[2].level", "integer"),
    "level as a string": (lambda d: d["needs"][0].update(level="1"), "needs[0].level", "integer"),
    "level as a bool": (lambda d: d["needs"][0].update(level=True), "needs[0].level", "integer"),
    "level out of range": (lambda d: d["needs"][2].update(level=4), "needs[2].level", "1..3"),
    "NaN value": (lambda d: d["options"][0]["values"].update({_price_attr(d): float("nan")}),
                  "options[0].values." , "finite"),
    "infinite bound": (lambda d: d["requirements"][0].update(value=float("inf")), "requirements[0].value", "finite"),
    "bound as a string": (lambda d: d["requirements"][0].update(value="200"), "requirements[0].value", "finite"),
    "number as a string": (lambda d: d["options"][4].update(number="5"), "options[4].number", "integer"),
    "decimals as a bool": (lambda d: d["attributes"][0].update(decimals=True), "attributes[0].decimals", "integer"),
    "request not a string": (lambda d: d.update(request=["a"]), "request", "string"),
    "bare yes keyword": (lambda d: d["needs"][1].update(keywords=["yes", "layover"]), "needs[1].keywords[0]",
                         "bare yes/no"),
    "bare no attribute keyword": (lambda d: d["attributes"][-1]["keywords"].append("No"),
                                  f"attributes[{0}].keywords", "bare yes/no"),
    "description prints another value": (
        lambda d: d["options"][1].update(description=d["options"][1]["description"] + ", " + next(
            w for w in d["attributes"][-1]["values"] if w != d["options"][1]["values"][d["attributes"][-1]["name"]]
        )),
        "options[1].description", "but the value is",
    ),
    "description disagrees with value": (
        lambda d: d["options"][2]["values"].update({_price_attr(d): d["options"][2]["values"][_price_attr(d)] + 7}),
        "options[2].description", "does not print",
    ),
}


@pytest.mark.parametrize("case", sorted(STRICT))
def test_strict_types_are_errors_naming_line_scenario_and_field(tmp_path, valid, case):
    fn, field, rule = STRICT[case]
    bad = _mutate(valid, fn)
    path = tmp_path / "bank.jsonl"
    path.write_text(json.dumps(valid) + "\n" + json.dumps(bad) + "\n")  # NaN/inf are written as NaN/Infinity
    errors = [str(e) for e in validate_file(path)]
    assert errors, case
    if case == "bare no attribute keyword":
        field = f"attributes[{len(valid['attributes']) - 1}].keywords"
    assert any(
        e.startswith(f"line 2: {valid['id']}: {field}") and rule in e for e in errors
    ) or any(e.startswith("line 2: bank.jsonl: <json>") and "not allowed" in e for e in errors), errors


def test_nan_and_infinity_in_json_are_rejected_by_the_reader(tmp_path, valid):
    path = tmp_path / "bank.jsonl"
    text = json.dumps(valid)
    price = _price_attr(valid)
    value = valid["options"][0]["values"][price]
    for constant in ("NaN", "Infinity", "-Infinity"):
        path.write_text(text.replace(f'"{price}": {json.dumps(value)}', f'"{price}": {constant}', 1) + "\n")
        errors = validate_file(path)
        assert len(errors) == 1 and errors[0].line == 1 and f"{constant} is not allowed" in str(errors[0])


def test_in_memory_nan_is_rejected_with_scenario_and_field(valid):
    d = _mutate(valid, lambda d: d["options"][3]["values"].update({_price_attr(d): float("nan")}))
    with pytest.raises(ScenarioError, match=rf"{valid['id']}: options\[3\]\.values\.{_price_attr(valid)}: .*finite"):
        Scenario.from_dict(d)


def test_empty_file_is_an_error(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    for text in ("", "\n\n  \n"):
        path.write_text(text)
        errors = validate_file(path)
        assert len(errors) == 1 and "empty" in str(errors[0]) and errors[0].line == 1
        with pytest.raises(ScenarioError, match="empty"):
            load_scenarios(path)
    assert cli_main(["scenarios", "validate", str(path)]) == 1
    assert "0 valid, 1 problem" in capsys.readouterr().out


def test_worse_text_comparing_with_other_options_is_rejected(valid):
    def compare(d):
        d["attributes"][0]["worse"] = "it costs more than the other one that works"

    errors = _errors(_mutate(valid, compare))
    assert any("attributes[0].worse" in e and "own drawback" in e for e in errors), errors


# -- categorical request requirements -------------------------------------------------


@pytest.fixture(scope="module")
def categorical() -> dict:
    s = next(s for s in load_scenarios() if any(r.categorical for r in s.requirements))
    return s.to_dict()


def _cat_index(d: dict) -> int:
    return next(i for i, r in enumerate(d["requirements"]) if "in" in r)


def _vocab(d: dict, name: str) -> list[str]:
    return next(a["values"] for a in d["attributes"] if a["name"] == name)


CATEGORICAL = {
    "on a need attribute": (
        lambda d: d["requirements"][_cat_index(d)].update(attribute=d["needs"][0]["attribute"],
                                                          **{"in": d["needs"][0]["accept"]}),
        "hidden need's attribute",
    ),
    "on a numeric attribute": (
        lambda d: d["requirements"][_cat_index(d)].update(attribute=d["priority"]), "is numeric",
    ),
    "every value allowed": (
        lambda d: d["requirements"][_cat_index(d)].update(
            **{"in": _vocab(d, d["requirements"][_cat_index(d)]["attribute"])}
        ),
        "proper subset",
    ),
    "unknown value": (lambda d: d["requirements"][_cat_index(d)].update(**{"in": ["teleport"]}), "proper subset"),
    "visible but unused": (lambda d: d["requirements"].pop(_cat_index(d)), "no requirement uses it"),
}


@pytest.mark.parametrize("rule", sorted(CATEGORICAL))
def test_categorical_requirement_rules(categorical, rule):
    fn, expected = CATEGORICAL[rule]
    errors = _errors(_mutate(categorical, fn))
    assert any(expected in e for e in errors), errors


def test_requirement_with_both_forms_is_rejected(categorical):
    d = _mutate(categorical, lambda d: d["requirements"][_cat_index(d)].update(op="<=", value=3))
    with pytest.raises(ScenarioError, match=r"requirements\[\d\]\.in: .*not both"):
        Scenario.from_dict(d)


def test_categorical_requirement_in_domain_content_is_checked():
    raw = json.loads(AIRLINE.read_text())
    persona = raw["personas"][0]
    persona["requirements"].append(
        {"attribute": persona["needs"][1]["attribute"], "in": persona["needs"][1]["accept"], "statement": "Must."}
    )
    with pytest.raises(ScenarioError, match=r"personas\[0\]\.requirements\[1\]\.attribute: .*hidden needs"):
        parse_domain(raw, "x.json")
    persona["requirements"][-1] = {"attribute": "wifi", "in": ["in-flight Wi-Fi", "no Wi-Fi on board"],
                                   "statement": "Must."}
    with pytest.raises(ScenarioError, match="at least one value that violates"):
        parse_domain(raw, "x.json")


# -- the request never states a hidden need ---------------------------------------------


@pytest.mark.parametrize("source", ["accept", "keywords", "attribute keyword"])
def test_request_that_states_a_hidden_need_is_rejected(valid, source):
    def leak(d):
        need = d["needs"][1]
        attr = next(a for a in d["attributes"] if a["name"] == need["attribute"])
        phrase = {"accept": need["accept"][0], "keywords": need["keywords"][0],
                  "attribute keyword": attr["keywords"][0]}[source]
        d["request"] = f"{d['request']} Oh, and {phrase}."

    errors = _errors(_mutate(valid, leak))
    assert any(e.startswith(f"{valid['id']}: request: states hidden need L2") for e in errors), errors


def test_the_papers_ptsd_example_is_caught():
    s = next(s for s in load_scenarios() if s.id == "mental-health-therapists-02")
    assert s.need(1).attribute == "specialty"
    d = s.to_dict()
    d["request"] = "I'm a veteran looking for a therapist for PTSD. Who's best-rated at $180 a session or less?"
    assert any("states hidden need L1 (specialty)" in e for e in _errors(d))


def test_no_bundled_request_states_a_need():
    from hear2act_env.scenarios.quality import phrases_in
    from hear2act_env.scenarios.validate import need_phrases

    for s in load_scenarios():
        for n in s.needs:
            assert phrases_in(s.request, need_phrases(n, s.attribute(n.attribute))) == [], s.id


# -- the request never gives a hidden need's premise -------------------------------------


def _bundled(sid: str) -> dict:
    return next(s for s in load_scenarios() if s.id == sid).to_dict()


def test_request_that_gives_a_needs_premise_is_rejected():
    # The bank's own wording before the realism pass: "with our toddler" is the reason
    # behind L2 (a kitchen for the toddler's meals) and L3 (step-free access).
    d = _bundled("vacation-rental-properties-01")
    assert _errors(d) == []
    d["request"] = ("We're planning a week at the beach this summer with our toddler. "
                    "What's the cheapest rental under $250 a night?")
    errors = _errors(d)
    for level, attr in ((2, "kitchen"), (3, "access")):
        assert any(f"request: gives the premise of hidden need L{level} ({attr}): shares ['toddler']" in e
                   for e in errors), errors


def test_premise_rule_catches_a_renewal_deadline():
    d = _bundled("pet-insurance-policies-09")
    d["request"] = ("My insurer just hiked my golden retriever's premium and renewal is in three days. "
                    "Find me the best-rated plan under $95 a month.")
    errors = [e for e in _errors(d) if "premise" in e]
    assert any("L2 (waiting)" in e and "'renew'" in e for e in errors), errors  # Porter2 stems "renewal" to "renew"


def test_topic_and_everyday_words_are_not_premises():
    # "rental", "beach" are this domain's topic; "week", "summer", numbers are everyday words.
    d = _bundled("vacation-rental-properties-01")
    need_text = " ".join(f"{n['statement']} {n.get('hint', '')}" for n in d["needs"])
    assert "rental" in need_text.lower() or "week" in need_text.lower()
    d["request"] = "This summer we want a rental for a week. What's the cheapest one under $250 a night?"
    assert [e for e in _errors(d) if "premise" in e] == []


def test_no_bundled_request_gives_a_premise():
    bad = [str(e) for s in load_scenarios() for e in problems(s) if "premise" in str(e)]
    assert bad == []
