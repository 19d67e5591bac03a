"""One decision per (response, criterion, source), wherever it is read.

A generated project holds every decision kind: binary criteria, an ordinal 0-10 criterion
decided by option and by value, a nominal criterion with ties, cannot-assess verdicts, invalid
and missing judge outputs, a judge with three samples, a panel, checkers, a cohort with overlap
3 and one with overlap 2, a project-wide rubric and case-specific rubrics, and adjudications.
The decision of every source is then read from the agreement command's paired-decisions file,
the side-by-side page, ``gold.jsonl``, the researcher API and (for the individual labels) the
annotator API, and must be the same everywhere; under every cannot-assess strategy the agreement
command pairs the same decisions and maps cannot-assess as the strategy says.
"""
import json
import random
import re
from html import unescape
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Criterion, Label, Project, Response
from grading.bundles import bundle_import
from grading.models import Adjudication, Judge
from tests.bundles import write_bundle
from tests.roles import grant

SLUG = "every-kind"
TONE = [{"label": "poor", "value": 0}, {"label": "fair", "value": 5}, {"label": "good", "value": 10}]
LENGTH = [{"label": "short", "value": 0}, {"label": "right", "value": 1}, {"label": "long", "value": 0}]
COHORTS = {"g1": ["a1", "a2", "a3"], "g2": ["b1", "b2"]}
CHECKERS = {"g1": "k1", "g2": "k2"}


def _bundle_parts(seed: int = 7) -> dict:
    rng = random.Random(seed)
    cases, responses, labels, judgments = [], [], [], []
    rubric = [
        {"criterion_id": "tone", "text": "Tone suits a worried patient", "kind": "ordinal", "options": TONE},
        {"criterion_id": "length", "text": "Length is right", "kind": "nominal", "options": LENGTH},
        {"criterion_id": "safety", "text": "Gives safety-net advice", "weight": 2},
    ]
    for i in range(4):
        case = {"case_id": f"c{i}", "prompt": f"Question {i}: what should I do about symptom {i}?",
                "metadata": {"difficulty": ["low", "medium", "high", "high"][i]}}
        if i < 2:  # case-specific rubrics; c2 and c3 use the project rubric
            case["criteria"] = [
                {"criterion_id": f"c{i}-k{j}", "text": f"Case {i} key point {j}", "weight": -1 if j == 2 else 1}
                for j in range(3)
            ] + [{"criterion_id": f"c{i}-tone", "text": "Tone", "kind": "ordinal", "options": TONE}]
        cases.append(case)
        for model in ("m-alpha", "m-beta"):
            responses.append({"response_id": f"r{i}-{model}", "case_id": f"c{i}", "model": model,
                              "text": f"Answer {i} by {model}: rest, fluids, and see a doctor if it gets worse."})
    criteria_of = {c["case_id"]: (c.get("criteria") or rubric) for c in cases}

    def decision(criterion):
        kind = criterion.get("kind", "binary")
        if kind == "binary":
            return {"verdict": rng.choice(["met", "met", "not_met", "not_met", "cannot_assess"])}
        if kind == "ordinal":
            return rng.choice([{"option": rng.choice(["poor", "fair", "good"])}, {"value": rng.choice([2.5, 5.0, 7.5])}])
        return {"option": rng.choice(["short", "right", "long"])}

    for response in responses:
        for criterion in criteria_of[response["case_id"]]:
            for cohort, annotators in COHORTS.items():
                for annotator in annotators:
                    labels.append({"response_id": response["response_id"], "criterion_id": criterion["criterion_id"],
                                   "cohort": cohort, "annotator": annotator, **decision(criterion)})
                if rng.random() < 0.3:
                    labels.append({"response_id": response["response_id"], "criterion_id": criterion["criterion_id"],
                                   "cohort": cohort, "annotator": CHECKERS[cohort], "role": "checker", **decision(criterion)})
            for judge, samples in (("j-multi", 3), ("j-single", 1)):
                if rng.random() < 0.1:
                    continue  # a missing output: invalid, never dropped
                for sample in range(samples):
                    made = decision(criterion) if rng.random() > 0.15 else {"verdict": None}  # unparseable output
                    judgments.append({"response_id": response["response_id"], "criterion_id": criterion["criterion_id"],
                                      "judge": judge, "judge_model": f"model-{judge}", "sample": sample, "raw": "x", **made})
    project = {
        "slug": SLUG, "name": "Every decision kind", "blind": True, "rubric": rubric,
        "cohorts": [{"name": name} for name in COHORTS],
        "judges": [{"name": "j-multi", "backend": "replay", "model": "model-j-multi", "samples": 3},
                   {"name": "j-single", "backend": "replay", "model": "model-j-single"},
                   {"name": "panel", "backend": "panel", "settings": {"members": ["j-multi", "j-single"], "vote": "any"}}],
    }
    return {"project": project, "cases": cases, "responses": responses, "labels": labels, "judgments": judgments}


@pytest.fixture
def every_kind(db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "bundle", _bundle_parts()))
    project = Project.objects.get(slug=SLUG)
    adjudicator = get_user_model().objects.create_user("adj", password="pw")
    for response in Response.objects.filter(project=project, model="m-alpha")[:2]:
        criterion = Criterion.objects.filter(rubric_version=response.case.rubric_version, kind="binary").first()
        Adjudication.objects.create(project=project, response=response, criterion=criterion, verdict="met",
                                    adjudicator=adjudicator, note="settled")
    return project


SOURCES = ["cohort:g1", "cohort:g2", "judge:j-multi", "judge:j-single", "judge:panel", "gold"]


def _key(fields: dict, unresolved: bool = False) -> tuple:
    return json.dumps(fields, sort_keys=True), bool(unresolved)


def _from_pairs(tmp_path, source: str, strategy: str = "zero") -> tuple[dict, list]:
    path = tmp_path / f"pairs-{source.replace(':', '-')}-{strategy}.jsonl"
    call_command("agreement", "--project", SLUG, "--a", source, "--b", source, "--cannot-assess", strategy,
                 "--pairs", str(path), "--json", stdout=StringIO())
    pairs = [json.loads(line) for line in path.read_text().splitlines()]
    decided = {}
    for pair in pairs:
        side = dict(pair["a"])
        unresolved = side.pop("unresolved")
        side.pop("invalid")
        decided[(pair["response_id"], pair["criterion_id"])] = _key(side, unresolved)
    return decided, pairs


def _from_api(client, source: str) -> dict:
    body = client.get(f"/api/projects/{SLUG}/decisions/", {"source": source, "limit": 10000}).json()
    assert body["count"] == len(body["results"])
    out = {}
    for row in body["results"]:
        fields = {"option": row["option"]} if row["option"] is not None else {"verdict": row["verdict"]} if row[
            "verdict"] is not None else {"value": row["value"]} if row["value"] is not None else {"verdict": None}
        out[(row["response_id"], row["criterion_id"])] = _key(fields, row["unresolved"])
    return out


CELL = re.compile(r'<td class="cell" data-source="([^"]+)"(?: data-decision="([^"]*)")?( data-unresolved="true")?')


def _from_side_by_side(client, project) -> dict:
    out = {}
    for response in Response.objects.filter(project=project):
        html = client.get(f"/responses/{response.pk}/side-by-side/").content.decode()
        assert "side-by-side" in html
        for row in re.split(r"<tr data-criterion=", html)[1:]:
            criterion = row.split('"')[1]
            for source, decision, unresolved in CELL.findall(row):
                if decision:
                    out[(source, response.external_id, criterion)] = _key(json.loads(unescape(decision)), bool(unresolved))
    return out


def test_every_reader_sees_the_same_decision(every_kind, client, tmp_path):
    staff = grant(get_user_model().objects.create_user("res", password="pw"), every_kind, "adjudicator")
    client.force_login(staff)
    page = _from_side_by_side(client, every_kind)
    call_command("export_gold", "--project", SLUG, "--out", str(tmp_path / "export"), "--json", stdout=StringIO())
    gold_lines = [json.loads(line) for line in (tmp_path / "export" / "gold.jsonl").read_text().splitlines()]
    checked = 0
    for source in SOURCES:
        frame, _ = _from_pairs(tmp_path, source)
        api = _from_api(client, source)
        assert api == frame, source
        assert frame, source
        for (response, criterion), decision in frame.items():
            if source != "gold":
                assert page[(source, response, criterion)] == decision, (source, response, criterion)
                checked += 1
        if source != "gold":  # every decision the page shows is one of the frame's
            assert {k[1:] for k in page if k[0] == source} == set(frame), source
        if source.startswith("cohort:"):
            name = source.split(":")[1]
            exported = {(g["response_id"], g["criterion_id"]): json.dumps(g["cohort_decisions"][name], sort_keys=True)
                        for g in gold_lines if name in g["cohort_decisions"]}
            assert exported == {k: v[0] for k, v in frame.items()}, source
        if source == "gold":
            decided = {(g["response_id"], g["criterion_id"]): json.dumps({k: g[k] for k in ("verdict", "option", "value") if k in g},
                                                                         sort_keys=True)
                       for g in gold_lines if g["provenance"] != "unresolved"}
            assert decided == {k: v[0] for k, v in frame.items()}
    assert checked > 120  # 8 responses x 4 criteria x 5 sources, less the missing judge outputs
    # The project really has every kind of decision this test is about.
    kinds = [v for v in page.values()]
    assert any(unresolved for _, unresolved in kinds)
    assert any('"value"' in fields for fields, _ in kinds) and any('"option"' in fields for fields, _ in kinds)
    assert any('"cannot_assess"' in fields for fields, _ in kinds)
    assert Label.objects.filter(project=every_kind, role="checker").exists()
    assert {g["provenance"] for g in gold_lines} == {"agreed", "adjudicated", "unresolved"}


def test_the_annotator_api_shows_each_annotators_own_labels(every_kind, client):
    from annotation.assignments import assignments_create
    from annotation.models import Cohort

    assignments_create(cohort=Cohort.objects.get(project=every_kind, name="g1"), overlap=3)
    user = get_user_model().objects.get(username="a2")
    client.force_login(user)
    seen = 0
    for item in client.get("/api/assignments/", {"limit": 1000}).json()["results"]:
        detail = client.get(f"/api/assignments/{item['id']}/").json()
        stored = {label.criterion_id: (label.verdict, label.option_label, label.value)
                  for label in Label.objects.filter(annotator=user, response__assignments__pk=item["id"])}
        shown = {row["criterion"]: (row["verdict"], row["option"], row["value"]) for row in detail["labels"]}
        assert shown == stored and shown
        seen += len(shown)
    assert seen > 20


@pytest.mark.parametrize("strategy", ["skip", "zero", "partial", "fail"])
def test_each_cannot_assess_strategy_pairs_the_same_decisions(every_kind, tmp_path, strategy):
    baseline, _ = _from_pairs(tmp_path, "cohort:g1", "zero")
    decided, pairs = _from_pairs(tmp_path, "cohort:g1", strategy)
    assert decided == baseline
    penalties = set(Criterion.objects.filter(project=every_kind, weight__lt=0).values_list("external_id", flat=True))
    cannot = [p for p in pairs if p["kind"] == "binary" and p["a"].get("verdict") == "cannot_assess"]
    assert cannot
    for pair in cannot:
        expected = {"skip": None, "zero": 0, "partial": 0, "fail": 1 if pair["criterion_id"] in penalties else 0}[strategy]
        assert pair["a_binary"] == expected, (strategy, pair)
    for pair in pairs:
        if pair["kind"] == "binary" and pair["a"].get("verdict") in ("met", "not_met"):
            assert pair["a_binary"] == (1 if pair["a"]["verdict"] == "met" else 0)


def test_the_judge_with_samples_and_the_panel_have_invalid_and_tied_decisions(every_kind, tmp_path):
    _, pairs = _from_pairs(tmp_path, "judge:j-multi")
    assert any(p["a"]["invalid"] for p in pairs)
    assert any(p["a"]["unresolved"] for p in pairs)  # a nominal tie over samples
    assert Judge.objects.get(project=every_kind, name="j-multi").samples == 3


def test_decisions_of_several_sources_at_once_are_each_sources_own(every_kind):
    """``decisions_by_criterion(source=...)``, which the side-by-side and adjudication pages read in one
    pass, keys each source's decisions as reading that source's rows alone does."""
    from grading.selectors import cohort_frames, decisions_by_criterion

    frames = cohort_frames(project=every_kind)
    together = decisions_by_criterion(frames, source="cohort")
    names = sorted(frames["cohort"].unique())
    assert len(names) == 2 and len(together) == len(frames)
    for name in names:
        alone = decisions_by_criterion(frames[frames["cohort"] == name])
        assert alone and {key[1:]: d for key, d in together.items() if key[0] == name} == alone
