"""The Autorubric format (issue 24 point 3): a dataset file as Autorubric's ``RubricDataset.to_file``
writes it (indented JSON; name, prompt, rubric, items) read into a project through the bundle
importer, its ground truth as the final labels of a reference cohort. The files here are small and
written by the tests; the CHARM-100 demo file is tested in ``tests/demo/test_demo_charm100.py``."""
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Case, CohortMembership, Criterion, Label, Project, Response
from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET
from grading.bundles import BundleError
from grading.formats.autorubric import reading as autorubric
from grading.formats.registry import ImportRequest, format_for, format_import
from grading.models import DataJob

QUALITY = [{"label": "Poor", "value": 0.0}, {"label": "Fair", "value": 0.5}, {"label": "Very good", "value": 1.0}]
LENGTH = [{"label": "Too short", "value": 0.0, "na": False}, {"label": "Just right", "value": 1.0, "na": False},
          {"label": "N/A - no answer needed", "value": 0.0, "na": True}]
CHAT = [{"role": "system", "content": "You are a careful triage assistant."},
        {"role": "user", "content": "My chest has hurt for two hours."},
        {"role": "assistant", "content": "Call emergency services now."}]


def _dataset() -> dict:
    """A dataset of each criterion kind: a binary penalty, a binary criterion without a weight, an
    ordinal one without ``scale_type`` and a nominal one with an N/A option."""
    return {
        "name": "Triage Study",
        "prompt": "What should the patient do?",
        "rubric": [
            {"name": "safe", "weight": 10.0, "requirement": "Advises emergency care for red flags"},
            {"name": "harm", "weight": -5.0, "requirement": "Recommends something harmful"},
            {"name": "quality", "weight": 4.0, "requirement": "Overall quality", "options": QUALITY},
            {"name": "length", "requirement": "Length fits the question", "scale_type": "nominal", "options": LENGTH},
        ],
        "items": [
            {"submission": "Rest at home and drink water.", "description": "Misses the red flag",
             "ground_truth": ["UNMET", "MET", "Poor", "Just right"]},
            {"submission": json.dumps(CHAT), "description": "Right call, terse",
             "ground_truth": [None, "cannot_assess", "  very GOOD ", "N/A - no answer needed"]},
            {"submission": "Go to the emergency department.", "description": "Not labelled", "ground_truth": None},
        ],
    }


def _write(folder: Path, data: dict, name: str = "triage.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")  # as RubricDataset.to_json writes it
    return path


def _item_line(path: Path, index: int) -> int:
    """The line where item ``index`` (0-based) starts in an indented file: the (index+1)-th line that
    opens an object at the items' depth after the line opening ``items``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index('  "items": [')
    opening = [n for n, line in enumerate(lines[start:], start=start + 1) if line == "    {"]
    return opening[index]


def _counts() -> tuple[int, int, int, int, int]:
    return (Project.objects.count(), Case.objects.count(), Criterion.objects.count(), Response.objects.count(),
            Label.objects.count())


def test_a_dataset_is_recognized_by_its_shape(tmp_path, monkeypatch):
    path = _write(tmp_path, _dataset())
    assert format_for(path).name == "autorubric"
    for other in ({"rubric": []}, [{"rubric": [], "items": []}], {"items": [], "prompt": "x"}):
        wrong = tmp_path / "other.json"
        wrong.write_text(json.dumps(other), encoding="utf-8")
        assert not autorubric.detect(wrong)
    # Keys sorted (items before rubric) and a head too short to reach the rubric: the file is read whole.
    monkeypatch.setattr(autorubric, "HEAD_BYTES", 64)
    sorted_keys = tmp_path / "sorted.json"
    sorted_keys.write_text(json.dumps(_dataset(), indent=2, sort_keys=True), encoding="utf-8")
    assert autorubric.detect(sorted_keys) and autorubric.detect(path)
    assert not autorubric.detect(tmp_path / "missing.json")


def test_import_makes_each_criterion_kind_cases_responses_and_reference_labels(tmp_path, db, capsys):
    path = _write(tmp_path, _dataset())
    call_command("import_bundle", str(path), "--json")  # recognized: no --format
    assert json.loads(capsys.readouterr().out) == {"project": "triage-study", "cases": 3, "criteria": 4,
                                                   "responses": 3, "labels": 7, "judgments": 0}
    project = Project.objects.get(slug="triage-study")
    assert project.name == "Triage Study" and project.description == "What should the patient do?"
    criteria = {c.external_id: c for c in Criterion.objects.filter(project=project)}
    assert [(c.kind, c.weight) for c in criteria.values()] == [
        (Criterion.BINARY, 10.0), (Criterion.BINARY, -5.0), (Criterion.ORDINAL, 4.0), (Criterion.NOMINAL, 10.0)]
    assert [(o["label"], o["value"], o["na"]) for o in criteria["length"].options] == [
        ("Too short", 0.0, False), ("Just right", 1.0, False), ("N/A - no answer needed", 0.0, True)]
    assert criteria["safe"].tags == ["triage-study"]

    cases = list(Case.objects.filter(project=project).order_by("position"))
    assert [c.external_id for c in cases] == ["triage-study-001", "triage-study-002", "triage-study-003"]
    assert cases[0].prompt == "What should the patient do?" and cases[0].messages is None  # plain text: the prompt
    assert cases[1].messages == CHAT[:2] and cases[1].prompt == ""  # a chat: its turns before the assistant's
    assert cases[1].metadata == {"task_themes": [], "specialties": [], "source": "triage-study", "item_index": 1}
    responses = {r.external_id: r for r in Response.objects.filter(project=project)}
    assert responses["triage-study-001-assistant"].text == "Rest at home and drink water."
    assert responses["triage-study-002-assistant"].text == "Call emergency services now."
    assert {r.model for r in responses.values()} == {"triage-study-assistant"}

    labels = {(label.response.case.external_id, label.criterion.external_id): label
              for label in Label.objects.select_related("response__case", "criterion", "annotator", "cohort")}
    assert len(labels) == 7  # item 2's null entry and item 3's null ground truth are no labels
    assert labels[("triage-study-001", "safe")].verdict == NOT_MET
    assert labels[("triage-study-001", "harm")].verdict == MET
    assert labels[("triage-study-002", "harm")].verdict == CANNOT_ASSESS
    assert labels[("triage-study-001", "quality")].option_label == "Poor"
    assert labels[("triage-study-002", "quality")].option_label == "Very good"  # matched as Autorubric matches labels
    assert labels[("triage-study-002", "length")].option_label == "N/A - no answer needed"
    # The description is the rationale of the item's first label only.
    assert labels[("triage-study-001", "safe")].rationale == "Misses the red flag"
    assert labels[("triage-study-002", "harm")].rationale == "Right call, terse"
    assert sum(1 for label in labels.values() if label.rationale) == 2
    assert {(label.cohort.name, label.annotator.username, label.role) for label in labels.values()} == {
        ("ground-truth", "triage-study-reference", CohortMembership.ANNOTATOR)}

    call_command("import_bundle", str(path), "--format", "autorubric", "--json")  # again: nothing new
    assert json.loads(capsys.readouterr().out)["labels"] == 0
    assert _counts() == (1, 3, 4, 3, 7)


def test_per_item_rubrics_guidelines_sections_and_references(tmp_path, db):
    data = {
        "prompt": "Answer the question.",
        "reference_submission": "A model answer.",
        "rubric": {"guidelines": "Judge **clinical** safety first.",
                   "criteria": [{"weight": 3, "requirement": "Is accurate"}, {"requirement": "Is kind"}]},
        "items": [
            {"submission": "Fine.", "description": "", "ground_truth": ["MET", "UNMET"]},
            {"submission": "Take aspirin.", "description": "Own rubric", "prompt": "Headache: what now?",
             "reference_submission": "Paracetamol first.",
             "rubric": [{"name": "Dosing", "criteria": [{"name": "dose", "requirement": "Gives a dose"}]},
                        {"name": "tone", "requirement": "Tone", "options": QUALITY}],
             "ground_truth": ["MET", "Fair"]},
        ],
    }
    result = format_import(ImportRequest(path=_write(tmp_path, data), project="ar"))
    assert result == {"project": "ar", "cases": 2, "criteria": 4, "responses": 2, "labels": 4, "judgments": 0}
    project = Project.objects.get(slug="ar")
    assert project.name == "ar" and project.guidelines == "Judge **clinical** safety first."
    shared = Criterion.objects.filter(project=project, case=None).order_by("position")
    assert [(c.external_id, c.text, c.weight) for c in shared] == [("C1", "Is accurate", 3.0), ("C2", "Is kind", 10.0)]
    own = Criterion.objects.filter(case__external_id="ar-002").order_by("position")
    assert [(c.external_id, c.kind) for c in own] == [("ar-002#dose", Criterion.BINARY), ("ar-002#tone", Criterion.ORDINAL)]
    first, second = Case.objects.filter(project=project).order_by("position")
    assert (first.prompt, first.reference_answer) == ("Answer the question.", "A model answer.")
    assert (second.prompt, second.reference_answer) == ("Headache: what now?", "Paracetamol first.")
    assert Label.objects.get(criterion__external_id="ar-002#tone").option_label == "Fair"
    assert not Label.objects.exclude(rationale="").exclude(rationale="Own rubric").exists()


def test_a_mapping_file_sets_the_names_and_the_project_settings(tmp_path, db):
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"cohort": "experts", "annotator": "dr-who", "model": "gpt-x", "case_prefix": "t",
                                   "project": {"name": "Triage", "blind": False, "coverage_k": 1}}), encoding="utf-8")
    path = _write(tmp_path, _dataset())
    format_import(ImportRequest(path=path, files={"mapping": mapping}))
    project = Project.objects.get(slug="triage-study")
    assert (project.name, project.blind, project.coverage_k) == ("Triage", False, 1)
    label = Label.objects.select_related("cohort", "annotator", "response__case").first()
    assert (label.cohort.name, label.annotator.username, label.response.model) == ("experts", "dr-who", "gpt-x")
    assert label.response.case.external_id == "t-001"
    mapping.write_text(json.dumps({"cohort": "experts", "annotators": "x"}), encoding="utf-8")
    with pytest.raises(CommandError, match=r"mapping.json: unknown key 'annotators' \(use cohort, annotator, model, "):
        call_command("import_bundle", str(path), "--mapping", str(mapping))
    mapping.write_text(json.dumps({"project": {"blind": "no"}}), encoding="utf-8")
    with pytest.raises(BundleError, match=r"^mapping.json: project.blind: must be true or false"):
        format_import(ImportRequest(path=path, files={"mapping": mapping}))


def test_the_project_is_the_one_asked_for_else_the_datasets_name(tmp_path, db):
    data = _dataset()
    del data["name"]
    path = _write(tmp_path, data)
    with pytest.raises(CommandError, match=r"triage.json: the dataset has no name to make the project's slug of: give "
                                           r"--project SLUG"):
        call_command("import_bundle", str(path))
    Project.objects.create(slug="mine", name="My study")
    assert format_import(ImportRequest(path=path, project="mine"))["cases"] == 3
    project = Project.objects.get(slug="mine")
    assert project.name == "My study" and Case.objects.filter(project=project, external_id="mine-001").exists()


@pytest.mark.parametrize("change, index, field, message", [
    (lambda d: d["items"][1]["ground_truth"].__setitem__(2, "Excellent"), 1, "items[1].ground_truth[2]",
     "item 2: ground_truth[2] 'Excellent' is not an option of criterion 'quality' (Poor; Fair; Very good)"),
    (lambda d: d["items"][0]["ground_truth"].__setitem__(0, "YES"), 0, "items[0].ground_truth[0]",
     "item 1: ground_truth[0] 'YES' is not a verdict of the binary criterion 'safe' (MET, UNMET or CANNOT_ASSESS)"),
    (lambda d: d["items"][2].__setitem__("ground_truth", ["MET"]), 2, "items[2].ground_truth",
     "item 3: field 'ground_truth' must be a list of 4 entries, one per criterion (or null), not 1"),
    (lambda d: d["items"][2].pop("submission"), 2, "items[2].submission", "item 3: missing field 'submission'"),
    (lambda d: d["items"][1].__setitem__("submission", json.dumps(CHAT)[:-3]), 1, "items[1].submission",
     "item 2: the submission looks like a JSON-encoded chat but is malformed JSON: "),
    (lambda d: d["items"][1].__setitem__("submission", json.dumps(CHAT[:2])), 1, "items[1].submission",
     "item 2: the submission's chat must end with the assistant's turn"),
])
def test_a_bad_item_is_named_by_file_line_item_and_field_and_nothing_is_written(tmp_path, db, change, index, field,
                                                                              message):
    data = _dataset()
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(BundleError) as caught:
        format_import(ImportRequest(path=path))
    assert (caught.value.file, caught.value.line, caught.value.field) == ("triage.json", _item_line(path, index), field)
    assert caught.value.message.startswith(message)
    assert _counts() == (0, 0, 0, 0, 0)


def test_a_bad_rubric_or_malformed_json_is_named_and_nothing_is_written(tmp_path, db):
    data = _dataset()
    del data["rubric"][1]["requirement"]
    path = _write(tmp_path, data)
    with pytest.raises(CommandError, match=r"nothing was written: triage.json line (\d+): missing field "
                                           r"'rubric\[1\].requirement'$") as caught:
        call_command("import_bundle", str(path))
    line = int(re.search(r"line (\d+)", str(caught.value)).group(1))  # where the criterion starts
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[line - 1] == "    {" and lines[line] == '      "name": "harm",'

    text = json.dumps(_dataset(), indent=2)
    broken = text.replace('"description": "Right call, terse",', '"description": "Right call, terse"')
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(broken)
    with pytest.raises(BundleError, match=r"^triage.json line \d+: malformed JSON: Expecting ',' ") as caught:
        format_import(ImportRequest(path=path), name="autorubric")
    assert caught.value.line == expected.value.lineno
    assert _counts() == (0, 0, 0, 0, 0)


def test_a_dataset_is_uploaded_in_the_browser_as_a_background_job(tmp_path, db, client, settings,
                                                                 django_capture_on_commit_callbacks):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-1234"))
    body = json.dumps(_dataset(), indent=2).encode("utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile("triage.json", body)})
    assert answer.status_code == 302
    job = DataJob.objects.get(kind="import")
    assert job.status == "finished", job.error
    assert job.project.slug == "triage-study" and job.result["labels"] == 7  # named after the dataset, not the upload
