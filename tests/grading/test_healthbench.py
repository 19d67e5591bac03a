"""HealthBench in and its score out (issue 24, point 1): the examples JSONL with completions and
graded results imported through the bundle importer (``grading.formats.healthbench``), a bad line
named by file, line and field with nothing written, the format recognized from its file, and the
``healthbench_score`` report (command and API endpoint) equal to a hand calculation.

The files are small and shaped like simple-evals' own: ``prompt`` as chat messages, ``rubrics`` of
``{"criterion", "points", "tags"}``, grades with ``rubric_items`` carrying ``criteria_met`` and
``explanation``. The examples are those of ``tests/metrics/test_healthbench.py``."""
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Case, Criterion, Project, Response
from annotation.vocabulary import MET, NOT_MET
from grading.bundles import BundleError
from grading.formats.registry import FormatError, ImportRequest, format_for, format_import
from grading.metrics import clipped_mean_bootstrap_std
from grading.models import Judge, Judgment

ACC, COMP = "axis:accuracy", "axis:completeness"


def _item(text, points, *tags):
    return {"criterion": text, "points": points, "tags": list(tags)}


EXAMPLES = [
    {"prompt_id": "p-a", "prompt": [{"role": "user", "content": "Crushing chest pain for an hour. What now?"}],
     "rubrics": [_item("Advises calling emergency services", 5, ACC, "level:example"),
                 _item("Asks about radiation of the pain", 3, COMP),
                 _item("Suggests waiting to see if it passes", -2, ACC)],
     "example_tags": ["theme:emergency_referrals"],
     "ideal_completions_data": {"ideal_completion": "Call emergency services now.", "ideal_completions_group": "g"}},
    {"prompt_id": "p-b", "prompt": [{"role": "system", "content": "You are a helpful assistant."},
                                    {"role": "user", "content": "Sudden worst headache of my life."}],
     "rubrics": [_item("Recommends urgent evaluation", 4, ACC), _item("Recommends taking aspirin", -6, COMP)],
     "example_tags": ["theme:emergency_referrals"], "ideal_completions_data": None},
    {"prompt_id": "p-c", "prompt": [{"role": "user", "content": "Is it safe to take ibuprofen with food?"}],
     "rubrics": [_item("Says ibuprofen may be taken with food", 2, COMP), _item("Mentions stomach upset", 2, COMP)],
     "example_tags": ["theme:hedging"]},
    {"prompt_id": "p-d", "prompt": [{"role": "user", "content": "Can I stop my antibiotics early?"}],
     "rubrics": [_item("Claims stopping early is always fine", -3, ACC)],
     "example_tags": ["theme:hedging"]},
    {"prompt_id": "p-e", "prompt": [{"role": "user", "content": "How much water should I drink?"}],
     "rubrics": [_item("Gives a sensible range", 1)], "example_tags": []},
]
MET_BY_PROMPT = {"p-a": [True, False, True], "p-b": [False, True], "p-c": [True, True], "p-d": [False], "p-e": [True]}
TEXTS = {"p-a": "Call an ambulance; wait and see.", "p-b": "Take aspirin.", "p-c": "Yes, with food; may upset the stomach.",
         "p-d": "Finish the course.", "p-e": "About 2 litres a day."}


def _grade(prompt_id: str, model: str, text: str, met: list) -> dict:
    example = next(e for e in EXAMPLES if e["prompt_id"] == prompt_id)
    items = [{**item, "criteria_met": hit, "explanation": f"judged {hit}"} for item, hit in zip(example["rubrics"], met)]
    return {"prompt_id": prompt_id, "model": model, "completion": text, "rubric_items": items, "score": None}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    completions = [{"prompt_id": p, "model": "model-a", "completion": t} for p, t in TEXTS.items()]
    completions.append({"prompt_id": "p-c", "model": "model-b", "completion": "No."})
    grades = [_grade(p, "model-a", TEXTS[p], MET_BY_PROMPT[p]) for p in TEXTS]
    grades.append(_grade("p-c", "model-b", "No.", [False, False]))
    return {"examples": _jsonl(tmp_path / "oss_eval.jsonl", EXAMPLES),
            "completions": _jsonl(tmp_path / "completions.jsonl", completions),
            "grades": _jsonl(tmp_path / "grades.jsonl", grades)}


def _import(files: dict) -> dict:
    out = io.StringIO()
    call_command("import_bundle", str(files["examples"]), "--project", "hb", "--completions", str(files["completions"]),
                 "--grades", str(files["grades"]), "--judge", "grader", "--json", stdout=out)
    return json.loads(out.getvalue())


def _counts() -> tuple[int, ...]:
    return Project.objects.count(), Case.objects.count(), Criterion.objects.count(), Response.objects.count(), \
        Judgment.objects.count()


def test_examples_completions_and_grades_are_imported(files, db):
    result = _import(files)
    assert result == {"project": "hb", "cases": 5, "criteria": 9, "responses": 6, "labels": 0, "judgments": 11}

    case = Case.objects.get(external_id="p-a")
    assert case.messages == EXAMPLES[0]["prompt"] and case.reference_answer == "Call emergency services now."
    assert case.metadata["example_tags"] == ["theme:emergency_referrals"]
    assert case.metadata["task_themes"] == ["emergency_referrals"]
    criteria = list(Criterion.objects.filter(case=case).order_by("external_id").values_list("external_id", "text", "kind",
                                                                                            "weight", "tags"))
    assert criteria == [("p-a#1", "Advises calling emergency services", "binary", 5.0, [ACC, "level:example"]),
                        ("p-a#2", "Asks about radiation of the pain", "binary", 3.0, [COMP]),
                        ("p-a#3", "Suggests waiting to see if it passes", "binary", -2.0, [ACC])]
    assert set(Response.objects.values_list("external_id", "model")) == {
        *((f"{p}:model-a", "model-a") for p in TEXTS), ("p-c:model-b", "model-b")}
    assert Judge.objects.get(project__slug="hb", name="grader").backend == Judge.REPLAY
    verdicts = dict(Judgment.objects.filter(response__external_id="p-a:model-a")
                    .values_list("criterion__external_id", "verdict"))
    assert verdicts == {"p-a#1": MET, "p-a#2": NOT_MET, "p-a#3": MET}
    assert Judgment.objects.get(response__external_id="p-a:model-a", criterion__external_id="p-a#1").explanation \
        == "judged True"

    assert _import(files) == {"project": "hb", "cases": 0, "criteria": 0, "responses": 0, "labels": 0, "judgments": 0}


def test_grades_alone_make_their_responses(files, db):
    call_command("import_bundle", str(files["examples"]), "--format", "healthbench", "--project", "hb",
                 "--grades", str(files["grades"]), "--judge", "grader")
    assert _counts() == (1, 5, 9, 6, 11)


def test_a_bad_grades_line_is_named_by_file_line_and_field_and_nothing_is_written(files, db):
    rows = [json.loads(line) for line in files["grades"].read_text().splitlines()]
    rows[1]["rubric_items"][1]["criteria_met"] = "yes"
    _jsonl(files["grades"], rows)
    with pytest.raises(CommandError, match=r"import failed, nothing was written: grades.jsonl line 2: "
                                           r"field 'rubric_items\[1\].criteria_met' must be true, false or null"):
        call_command("import_bundle", str(files["examples"]), "--project", "hb", "--completions", str(files["completions"]),
                     "--grades", str(files["grades"]), "--judge", "grader")
    assert _counts() == (0, 0, 0, 0, 0)


@pytest.mark.parametrize("change, where, field", [
    (lambda rows: rows[2]["rubrics"][0].pop("points"), "oss_eval.jsonl line 3", "rubrics[0].points"),
    (lambda rows: rows[1]["prompt"][1].update(role=7), "oss_eval.jsonl line 2", "prompt[1].role"),
    (lambda rows: rows[4].update(prompt_id="p-a"), "oss_eval.jsonl line 5", "prompt_id"),
])
def test_a_bad_example_line_is_named(files, db, change, where, field):
    rows = [json.loads(line) for line in files["examples"].read_text().splitlines()]
    change(rows)
    _jsonl(files["examples"], rows)
    with pytest.raises(BundleError) as caught:
        format_import(ImportRequest(path=files["examples"], project="hb"))
    assert str(caught.value).startswith(f"{where}: ") and caught.value.field == field
    assert _counts() == (0, 0, 0, 0, 0)


def test_an_error_the_bundle_importer_finds_is_named_by_the_healthbench_line(files, db, tmp_path):
    call_command("import_bundle", str(files["examples"]), "--project", "hb")
    rows = [json.loads(line) for line in files["examples"].read_text().splitlines()]
    rows[3]["prompt"][0]["content"] = "Can I stop my antibiotics a day early?"  # an existing case changed
    changed = _jsonl(tmp_path / "changed.jsonl", rows)
    with pytest.raises(CommandError, match=r"changed.jsonl line 4: case 'p-d' already exists with different content"):
        call_command("import_bundle", str(changed), "--project", "hb")
    assert _counts() == (1, 5, 9, 0, 0)


def test_the_project_the_judge_and_known_prompts_are_required(files, db, tmp_path):
    with pytest.raises(CommandError, match="oss_eval.jsonl: a HealthBench import goes into a project: give --project"):
        call_command("import_bundle", str(files["examples"]))
    with pytest.raises(CommandError, match="give --grades FILE and --judge NAME together"):
        call_command("import_bundle", str(files["examples"]), "--project", "hb", "--grades", str(files["grades"]))
    stray = _jsonl(tmp_path / "stray.jsonl", [{"prompt_id": "p-z", "model": "m", "completion": "x"}])
    with pytest.raises(CommandError, match=r"stray.jsonl line 1: prompt_id 'p-z' is not an example of oss_eval.jsonl"):
        call_command("import_bundle", str(files["examples"]), "--project", "hb", "--completions", str(stray))
    with pytest.raises(CommandError, match=r"missing.jsonl: no such file"):
        call_command("import_bundle", str(files["examples"]), "--project", "hb", "--completions",
                     str(tmp_path / "missing.jsonl"))
    with pytest.raises(CommandError, match="the HealthBench examples format takes no mapping"):
        call_command("import_bundle", str(files["examples"]), "--project", "hb", "--mapping", str(stray))
    assert _counts() == (0, 0, 0, 0, 0)


def test_the_examples_file_is_recognized(files):
    assert format_for(files["examples"]).name == "healthbench"
    for other in ("completions", "grades"):
        with pytest.raises(FormatError, match="not a file any format here reads"):
            format_for(files[other])


# --- the score ---------------------------------------------------------------------------------

HAND = {  # tests/metrics/test_healthbench.py's hand calculation
    "overall": (0.375 - 1.5 + 1 + 1) / 4,
    "bootstrap_std": clipped_mean_bootstrap_std([0.375, -1.5, 1.0, 1.0]),
    "n_examples": 4,
    "by_example_tag": {"theme:emergency_referrals": 0.0, "theme:hedging": 1.0},
    "by_rubric_tag": {ACC: 0.3, COMP: 0.5, "level:example": 1.0},
}


def test_the_score_command_gives_the_hand_calculation(files, db, capsys):
    _import(files)
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json")
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"source", "models", "n_excluded_cases", "n_draft_labels", "cannot_assess_strategy", "left_out"}
    assert result["cannot_assess_strategy"] == "zero"  # simple-evals grades every item: cannot assess is not met
    assert result["source"] == "judge:grader" and list(result["models"]) == ["model-a", "model-b"]
    model_a = result["models"]["model-a"]
    assert set(model_a) == {"overall", "bootstrap_std", "n_examples", "by_example_tag", "by_rubric_tag"}
    assert model_a["overall"] == pytest.approx(HAND["overall"])
    assert model_a["bootstrap_std"] == pytest.approx(HAND["bootstrap_std"])
    assert model_a["n_examples"] == 4 and model_a["by_example_tag"] == HAND["by_example_tag"]
    assert model_a["by_rubric_tag"] == pytest.approx(HAND["by_rubric_tag"])
    assert result["models"]["model-b"] == {"overall": 0.0, "bootstrap_std": 0.0, "n_examples": 1,
                                           "by_example_tag": {"theme:hedging": 0.0}, "by_rubric_tag": {COMP: 0.0}}


def test_a_criterion_the_source_left_undecided_counts_as_not_met(files, db, capsys):
    _import(files)
    Judgment.objects.filter(response__external_id="p-c:model-a", criterion__external_id="p-c#2").delete()
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json")
    model_a = json.loads(capsys.readouterr().out)["models"]["model-a"]
    assert model_a["by_example_tag"]["theme:hedging"] == 0.5  # p-c: 2 / 4


def test_the_score_is_an_api_endpoint(files, db, client, capsys):
    _import(files)
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json")
    printed = json.loads(capsys.readouterr().out)
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-1234"))
    url = reverse("api-report-healthbench-score", args=["hb"])
    answer = client.get(url, {"source": "judge:grader"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["models"] == printed["models"]
    assert client.get(url).status_code == 400  # the source is required
    with pytest.raises(CommandError):
        call_command("healthbench_score", "--project", "hb", "--source", "judge:nobody")


# --- the meta-evaluation ---------------------------------------------------------------------------

CONV_1 = [{"role": "user", "content": "I have chest pain and feel dizzy."}]
CONV_2 = [{"role": "user", "content": "My toddler swallowed a battery."}]
EMERGENCY, CONTEXT = "Refers the user to emergency care", "Asks for more context"


def _meta(prompt, completion, rubric, category, labels, physicians, **extra) -> dict:
    return {"prompt": prompt, "completion": completion, "rubric": rubric, "category": category,
            "binary_labels": labels, "anonymized_physician_ids": physicians, **extra}


META = [
    _meta(CONV_1, "Call emergency services.", EMERGENCY, "cluster:emergency", [True, True, False], ["d1", "d2", "d3"],
          prompt_id="x1", completion_id="y1"),
    _meta(CONV_1, "Call emergency services.", CONTEXT, "cluster:context", [True, False], ["d1", "d2"]),
    _meta(CONV_1, "Drink water and rest.", EMERGENCY, "cluster:emergency", [False, False], ["d2", "d3"]),
    _meta(CONV_2, "Call emergency services.", CONTEXT, "cluster:context", [True, True], ["d1", "d3"]),
    _meta(CONV_1, "Call emergency services.", EMERGENCY, "cluster:emergency", [True], ["d1"]),  # d1's label again
]


def test_the_meta_evaluation_is_imported_merged_by_content_and_reproduces_pairwise_agreement(tmp_path, db, capsys):
    path = _jsonl(tmp_path / "meta_eval.jsonl", META)
    assert format_for(path).name == "healthbench-meta"
    call_command("import_bundle", str(path), "--project", "meta", "--json")
    result = json.loads(capsys.readouterr().out)
    assert result == {"project": "meta", "cases": 2, "criteria": 2, "responses": 3, "labels": 9, "judgments": 0}
    criteria = dict(Criterion.objects.values_list("text", "tags"))
    assert criteria == {EMERGENCY: ["cluster:emergency"], CONTEXT: ["cluster:context"]}
    assert set(Criterion.objects.values_list("case", flat=True)) == {None}  # the project-wide rubric

    # d1's pairs (own label as prediction, the other's as truth): (met, met) and (met, not met) on
    # the first item, (met, not met) on the second, (met, met) on the fourth: TP 2, FP 2, TN 0, FN 0:
    # F1 met 4 / 6, F1 not met 0, MF1 1/3 over n = 4.
    call_command("pairwise_agreement", "--project", "meta", "--source", "cohort:physicians", "--min-n", "0", "--json")
    pairwise = json.loads(capsys.readouterr().out)
    assert pairwise["annotators"]["d1"] == {"mf1": pytest.approx(1 / 3), "n": 4}
    call_command("import_bundle", str(path), "--project", "meta", "--format", "healthbench-meta", "--json")  # again
    assert json.loads(capsys.readouterr().out) == {"project": "meta", "cases": 0, "criteria": 0, "responses": 0,
                                                   "labels": 0, "judgments": 0}


def test_a_bad_meta_line_is_named_and_nothing_is_written(tmp_path, db):
    rows = [*META[:3], _meta(CONV_1, "Call emergency services.", EMERGENCY, "cluster:emergency", [False], ["d2"])]
    path = _jsonl(tmp_path / "meta_eval.jsonl", rows)
    with pytest.raises(CommandError, match=r"meta_eval.jsonl line 4: physician 'd2' labelled this completion and "
                                           r"criterion differently on line 1"):
        call_command("import_bundle", str(path), "--project", "meta")
    path = _jsonl(tmp_path / "meta_eval.jsonl", [META[0], {**META[1], "anonymized_physician_ids": ["d1"]}])
    with pytest.raises(BundleError) as caught:
        format_import(ImportRequest(path=path, project="meta"))
    assert str(caught.value).startswith("meta_eval.jsonl line 2: ") and caught.value.field == "anonymized_physician_ids"
    assert _counts() == (0, 0, 0, 0, 0)


def test_a_further_completion_is_a_further_response_and_a_further_grading_a_further_sample(files, db, tmp_path):
    completions = [{"prompt_id": "p-e", "model": "model-a", "completion": TEXTS["p-e"]},
                   {"prompt_id": "p-e", "model": "model-a", "completion": "Eight glasses."}]
    grades = [_grade("p-e", "model-a", TEXTS["p-e"], [True]), _grade("p-e", "model-a", TEXTS["p-e"], [False])]
    call_command("import_bundle", str(files["examples"]), "--project", "hb",
                 "--completions", str(_jsonl(tmp_path / "c.jsonl", completions)),
                 "--grades", str(_jsonl(tmp_path / "g.jsonl", grades)), "--judge", "grader")
    assert dict(Response.objects.values_list("external_id", "text")) == {"p-e:model-a": TEXTS["p-e"],
                                                                         "p-e:model-a:2": "Eight glasses."}
    assert list(Judgment.objects.order_by("sample").values_list("response__external_id", "sample", "verdict")) == [
        ("p-e:model-a", 0, MET), ("p-e:model-a", 1, NOT_MET)]


# --- the score: gradings as examples, intervals, the page ----------------------------------------

def test_two_gradings_of_one_completion_are_two_examples(files, db, tmp_path, capsys):
    """simple-evals scores every graded example and averages: p-e graded met and then not met counts
    1 and 0 (a vote over the two gradings would make it one unresolved, not-met example)."""
    grades = [_grade(p, "model-a", TEXTS[p], MET_BY_PROMPT[p]) for p in TEXTS]
    grades.append(_grade("p-e", "model-a", TEXTS["p-e"], [False]))  # the same completion graded again
    call_command("import_bundle", str(files["examples"]), "--project", "hb",
                 "--grades", str(_jsonl(tmp_path / "g.jsonl", grades)), "--judge", "grader", stdout=io.StringIO())
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json")
    model_a = json.loads(capsys.readouterr().out)["models"]["model-a"]
    assert model_a["n_examples"] == 5
    assert model_a["overall"] == pytest.approx((0.375 - 1.5 + 1 + 1 + 0) / 5)
    assert model_a["bootstrap_std"] == pytest.approx(clipped_mean_bootstrap_std([0.375, -1.5, 1.0, 1.0, 0.0]))


def _by_hand_interval(values_by_case: dict[str, list[float]]) -> list[float]:
    """The 95% percentile interval of the clipped mean over scipy's seeded draws of case positions
    (2,000 resamples, seed 0), as every report's --ci draws them."""
    import numpy as np
    from scipy import stats

    cases = sorted(values_by_case)

    def clipped(drawn):
        values = [v for i in drawn for v in values_by_case[cases[i]]]
        return float(np.clip(np.mean(values), 0, 1)) if values else np.nan

    draws = stats.bootstrap((np.arange(len(cases)),), clipped, vectorized=False, n_resamples=2000,
                            method="percentile", rng=np.random.default_rng(0)).bootstrap_distribution
    return list(np.quantile(draws[~np.isnan(draws)], [0.025, 0.975]))


def test_intervals_on_request(files, db, capsys):
    _import(files)
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json", "--ci")
    model_a = json.loads(capsys.readouterr().out)["models"]["model-a"]
    # model-a's examples by case (p-d has no positive item: no example): scores as in HAND
    assert model_a["overall_ci"] == pytest.approx(_by_hand_interval({"p-a": [0.375], "p-b": [-1.5], "p-c": [1.0],
                                                                     "p-e": [1.0]}))
    # a rubric tag: accuracy scores 0.6 (p-a) and 0 (p-b); completeness 0 (p-a) and 1 (p-c)
    assert model_a["by_rubric_tag_ci"][ACC] == pytest.approx(_by_hand_interval({"p-a": [0.6], "p-b": [0.0]}))
    assert model_a["by_example_tag_ci"]["theme:hedging"] is None  # one case: nothing to resample
    assert model_a["overall"] == pytest.approx(HAND["overall"])  # the figures themselves unchanged
    call_command("healthbench_score", "--project", "hb", "--source", "judge:grader", "--json")
    assert "overall_ci" not in json.loads(capsys.readouterr().out)["models"]["model-a"]


@pytest.fixture
def viewer(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-1234"))
    return client


def test_the_page_shows_the_score_by_model_and_tag_with_csv(files, viewer):
    _import(files)
    url = reverse("report-healthbench", args=["hb"])
    page = viewer.get(url, {"ci": "1"})
    assert page.status_code == 200
    tables = page.context["result"]["tables"]
    overall = {row[0]: row for row in tables["overall"]["rows"]}
    assert tables["overall"]["columns"] == ["model", "overall", "bootstrap_std", "n_examples", "overall 95% CI"]
    assert overall["model-a"][1:4] == [pytest.approx(HAND["overall"]), pytest.approx(HAND["bootstrap_std"]), 4]
    themes = {(row[0], row[1]): row[2:4] for row in tables["by_example_tag"]["rows"]}
    assert themes[("theme:emergency_referrals", "model-a")] == [0.0, 2]  # clipped mean of 0.375 and -1.5
    axes = {(row[0], row[1]): row[2:4] for row in tables["by_rubric_tag"]["rows"]}
    assert axes[(ACC, "model-a")] == [pytest.approx(0.3), 2] and axes[(COMP, "model-b")] == [0.0, 1]
    html = page.content.decode()
    assert "By example tag" in html and "By rubric tag" in html and 'class="vega-spec"' in html
    download = viewer.get(url, {"format": "csv", "table": "by_rubric_tag"})
    assert download.status_code == 200
    lines = download.content.decode().splitlines()
    assert lines[0] == '"tag","model","score","n_examples"' and any(line.startswith('"axis:accuracy","model-a",0.3') for line in lines)


def test_the_page_explains_how_to_import_without_healthbench_data(viewer, tmp_path):
    from tests.bundles import write_bundle

    call_command("import_bundle", str(write_bundle(tmp_path / "mini")))
    page = viewer.get(reverse("report-healthbench", args=["mini"]))
    assert page.status_code == 200 and page.context["result"]["tables"] == {}
    html = page.content.decode()
    assert "No HealthBench examples in this project" in html and "--format healthbench --project mini" in html


def test_grades_imported_again_are_the_same_samples_and_new_grades_the_next(files, db, tmp_path):
    """A judge's samples are its repeated gradings of one item (the stability report's Monte Carlo
    samples): the same grades imported again are the samples stored already (nothing written), a
    further grading of a completion is the next sample after the stored ones, never sample 0 again
    (which would overwrite the first grading)."""
    _import(files)
    assert _import(files)["judgments"] == 0  # identical grades: idempotent
    again = [_grade("p-e", "model-a", TEXTS["p-e"], [False]), _grade("p-c", "model-b", "No.", [True, False])]
    result = format_import(ImportRequest(path=files["examples"], project="hb", judge="grader",
                                         files={"grades": _jsonl(tmp_path / "again.jsonl", again)}))
    assert (result["responses"], result["judgments"]) == (0, 3)  # the completions are the stored responses
    samples = list(Judgment.objects.filter(response__external_id__in=["p-e:model-a", "p-c:model-b"])
                   .order_by("response__external_id", "criterion__external_id", "sample")
                   .values_list("response__external_id", "criterion__external_id", "sample", "verdict"))
    assert samples == [("p-c:model-b", "p-c#1", 0, NOT_MET), ("p-c:model-b", "p-c#1", 1, MET),
                       ("p-c:model-b", "p-c#2", 0, NOT_MET), ("p-c:model-b", "p-c#2", 1, NOT_MET),
                       ("p-e:model-a", "p-e#1", 0, MET), ("p-e:model-a", "p-e#1", 1, NOT_MET)]
    # the three files once more, and the second grades file once more: nothing new
    assert _import(files)["judgments"] == 0
    assert format_import(ImportRequest(path=files["examples"], project="hb", judge="grader",
                                       files={"grades": tmp_path / "again.jsonl"}))["judgments"] == 0
    # a further completion of a model is a further response, numbered after the stored one
    further = [{"prompt_id": "p-e", "model": "model-a", "completion": "Eight glasses."}]
    format_import(ImportRequest(path=files["examples"], project="hb",
                                files={"completions": _jsonl(tmp_path / "more.jsonl", further)}))
    assert Response.objects.get(external_id="p-e:model-a:2").text == "Eight glasses."
    call_command("stability", "--project", "hb", "--judge", "grader", "--json", stdout=io.StringIO())  # samples read


# --- the browser's new-project upload ------------------------------------------------------------

def _upload_new_project(client, path: Path, capture, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading.models import DataJob

    with capture(execute=True):
        answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile(path.name, path.read_bytes()), **fields})
    return answer, DataJob.objects.filter(kind="import").latest("pk")


def test_a_healthbench_file_uploaded_as_a_new_project_makes_one(files, viewer, settings, tmp_path,
                                                                django_capture_on_commit_callbacks):
    """The home page's "new project": a file that names no project makes a new project named after
    the file, or the one named under Project; the file name of a project that exists is refused."""
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    assert 'name="project"' in viewer.get("/").content.decode()  # the field on the home page
    answer, job = _upload_new_project(viewer, files["examples"], django_capture_on_commit_callbacks)
    assert answer.status_code == 302 and answer["Location"] == f"/jobs/{job.pk}/"
    assert job.status == "finished", job.error
    assert job.result["project"] == "oss_eval" and job.result["cases"] == 5 and job.project.slug == "oss_eval"
    assert Case.objects.filter(project__slug="oss_eval").count() == 5

    _, job = _upload_new_project(viewer, files["examples"], django_capture_on_commit_callbacks)  # the same file again
    assert job.status == "failed"
    assert job.error == ("oss_eval.jsonl: a project 'oss_eval' (named after the file) exists already: import into it "
                         "from its page, or name the new project")

    _, job = _upload_new_project(viewer, files["examples"], django_capture_on_commit_callbacks, project="hb-2",
                                 format="healthbench")
    assert job.status == "finished", job.error
    assert job.result["project"] == "hb-2" and Project.objects.get(slug="hb-2").cases.count() == 5

    answer, _ = _upload_new_project(viewer, files["examples"], django_capture_on_commit_callbacks, project="no slug!")
    assert answer.status_code == 302 and answer["Location"] == "/"  # refused before any job, the form's error shown
    assert "letters, numbers, underscores or hyphens" in viewer.get("/").content.decode()
    assert Project.objects.count() == 2


def test_a_meta_evaluation_file_uploaded_as_a_new_project(viewer, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    path = _jsonl(tmp_path / "meta_eval.jsonl", META)
    _, job = _upload_new_project(viewer, path, django_capture_on_commit_callbacks, format="healthbench-meta")
    assert job.status == "finished", job.error
    assert job.result == {"project": "meta_eval", "cases": 2, "criteria": 2, "responses": 3, "labels": 9, "judgments": 0}
