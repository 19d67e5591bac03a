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
    assert set(result) == {"source", "models", "n_excluded_cases", "n_draft_labels"}
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
