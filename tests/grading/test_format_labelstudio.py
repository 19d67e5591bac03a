"""The Label Studio format (issue 24 point 2): a Label Studio JSON export read into a project
through the bundle importer, and a project written as Label Studio tasks with a labeling config;
Label Studio → evalsite → Label Studio gives the same tasks. The exports here are small and
shaped as Label Studio 1.x writes them (task and annotation fields it adds that evalsite does not
read included)."""
import copy
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Case, CohortMembership, Criterion, Label, Project, Response
from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET
from grading.bundles import BundleError
from grading.formats.registry import ImportRequest, format_export, format_for, format_import
from grading.models import DataJob, Judge, Judgment
from tests.bundles import write_bundle

CONFIG = """<View>
  <Header value="Prompt"/>
  <Text name="prompt" value="$prompt"/>
  <Header value="Response"/>
  <Text name="response" value="$response"/>
  <Header value="Advises calling emergency services"/>
  <Choices name="call" toName="response" choice="single" showInline="true">
    <Choice value="Met"/>
    <Choice value="Not met"/>
    <Choice value="Cannot assess"/>
  </Choices>
  <Header value="Tone fits the patient"/>
  <Choices name="tone" toName="response" choice="single" showInline="true">
    <Choice value="poor" hint="value 0.0"/>
    <Choice value="ok" hint="value 0.5"/>
    <Choice value="good" hint="value 1.0"/>
    <Choice value="Cannot assess"/>
  </Choices>
</View>
"""


def _result(name, word):
    return {"from_name": name, "to_name": "response", "type": "choices", "value": {"choices": [word]},
            "id": f"r-{name}", "origin": "manual"}


def _annotation(number, user, results, *, lead_time, ground_truth=False, cancelled=False):
    return {"id": number, "completed_by": user, "result": results, "was_cancelled": cancelled,
            "ground_truth": ground_truth, "lead_time": lead_time, "created_at": "2024-05-01T10:00:00.000000Z",
            "task": 0, "project": 3, "parent_prediction": None}


def _prediction(number, model_version, results):
    """A prediction as Label Studio 1.x exports it (from an ML backend or an import of pre-annotations)."""
    return {"id": number, "model_version": model_version, "score": 0.8, "result": results, "cluster": None,
            "neighbors": None, "mislabeling": 0.0, "created_ago": "2 days", "created_at": "2024-05-01T10:00:00.000000Z",
            "updated_at": "2024-05-01T10:00:00.000000Z", "task": 0, "project": 3}


def _tasks() -> list[dict]:
    chest = "Chest pain for two hours, what should I do?"
    return [
        {"id": 11, "data": {"prompt": chest, "response": "Call emergency services now.", "model": "model-a",
                            "case_id": "chest"},
         "annotations": [
             _annotation(1, 7, [_result("call", "Met"), _result("tone", "good")], lead_time=42.5),
             _annotation(2, 9, [_result("call", "Not met"), _result("tone", "ok")], lead_time=30.0),
             _annotation(3, 12, [_result("call", "Met"), _result("tone", "good")], lead_time=12.0, ground_truth=True),
         ],
         "drafts": [{"id": 5, "user": "a@b.c", "result": [_result("call", "Met")]}],
         "predictions": [_prediction(1, "judge-x", [_result("call", "Met"), _result("tone", "good")]),
                         _prediction(2, "judge-x", [_result("call", "Not met"), _result("tone", "good")]),  # sample 1
                         _prediction(3, "judge-y", [_result("call", "Met")])],
         "total_annotations": 3, "cancelled_annotations": 0, "inner_id": 1},
        {"id": 12, "data": {"prompt": chest, "response": "Rest at home.", "model": "model-b", "case_id": "chest"},
         "annotations": [
             _annotation(4, 7, [_result("call", "Not met"), _result("tone", "poor")], lead_time=20.0),
             _annotation(5, 9, [_result("call", "Cannot assess"), _result("tone", "Cannot assess")], lead_time=8.0),
             _annotation(6, 12, [_result("call", "Met")], lead_time=3.0, cancelled=True),
         ],
         "drafts": [], "predictions": [_prediction(4, "judge-x", [_result("call", "Cannot assess"), _result("tone", "poor")])],
         "inner_id": 2},
        {"id": 13, "data": {"prompt": "My child has a fever.", "response": "Give fluids.", "model": "model-a",
                            "case_id": "fever"},
         "annotations": [_annotation(7, 7, [_result("call", "Not met"), _result("tone", "ok")], lead_time=15.0)],
         "drafts": [], "predictions": [], "inner_id": 3},
    ]


def _write(directory: Path, tasks: list, *, config: str | None = CONFIG) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    if config is not None:
        (directory / "config.xml").write_text(config, encoding="utf-8")
    return path


def _essential(tasks: list[dict]) -> list[dict]:
    """What Label Studio reads back of a task: id, data, each annotation's user, role, time and
    results, and each prediction's model version and results (a result's region id and origin,
    annotation and prediction ids, scores and timestamps are Label Studio's own)."""
    def results(rows):
        return [{k: r[k] for k in ("from_name", "to_name", "type", "value")} for r in rows]

    return [{"id": t["id"], "data": t["data"], "annotations": [
        {"completed_by": a["completed_by"], "ground_truth": a["ground_truth"], "lead_time": a.get("lead_time"),
         "result": results(a["result"])} for a in t["annotations"] if not a.get("was_cancelled")],
        "predictions": [{"model_version": p["model_version"], "result": results(p["result"])}
                        for p in t.get("predictions") or []]} for t in tasks]


def _counts():
    return Project.objects.count(), Case.objects.count(), Response.objects.count(), Label.objects.count()


def test_an_export_is_recognized_by_its_shape(tmp_path):
    path = _write(tmp_path, _tasks())
    (tmp_path / "tasks.json").write_bytes(path.read_bytes())
    assert format_for(path).name == "labelstudio" and format_for(tmp_path).name == "labelstudio"  # file or folder
    other = tmp_path / "list.json"
    other.write_text(json.dumps([{"data": {"prompt": "x"}}]), encoding="utf-8")  # no annotations: not a task list
    with pytest.raises(BundleError, match="not a file any format here reads"):
        format_for(other)


def test_import_makes_criteria_responses_labels_and_checker_labels(tmp_path, db):
    result = format_import(ImportRequest(path=_write(tmp_path, _tasks()), project="ls"))
    assert result == {"project": "ls", "cases": 2, "criteria": 2, "responses": 3, "labels": 12, "judgments": 7,
                      "left_out": {"drafts": 1, "cancelled": 1, "other_results": 0}}
    criteria = {c.external_id: c for c in Criterion.objects.filter(project__slug="ls")}
    assert criteria["call"].kind == Criterion.BINARY and criteria["call"].text == "Advises calling emergency services"
    assert criteria["tone"].kind == Criterion.ORDINAL
    assert [(o["label"], o["value"]) for o in criteria["tone"].options] == [("poor", 0.0), ("ok", 0.5), ("good", 1.0)]
    assert list(Response.objects.order_by("position").values_list("external_id", "case__external_id", "model")) == [
        ("11", "chest", "model-a"), ("12", "chest", "model-b"), ("13", "fever", "model-a")]
    labels = {(label.response.external_id, label.criterion.external_id, label.annotator.username): label
              for label in Label.objects.select_related("response", "criterion", "annotator")}
    assert labels[("11", "call", "labelstudio-7")].verdict == MET
    assert labels[("11", "call", "labelstudio-9")].verdict == NOT_MET
    assert labels[("12", "call", "labelstudio-9")].verdict == CANNOT_ASSESS
    assert labels[("12", "tone", "labelstudio-9")].verdict == CANNOT_ASSESS
    assert labels[("11", "tone", "labelstudio-7")].option_label == "good"
    assert labels[("11", "call", "labelstudio-7")].time_spent_seconds == 42.5  # lead_time, on the annotation's first label
    assert labels[("11", "tone", "labelstudio-7")].time_spent_seconds is None
    checker = labels[("11", "call", "labelstudio-12")]
    assert checker.role == CohortMembership.CHECKER and checker.verdict == MET  # ground truth
    assert ("12", "call", "labelstudio-12") not in labels  # cancelled
    assert CohortMembership.objects.get(user__username="labelstudio-12").role == CohortMembership.CHECKER
    assert set(CohortMembership.objects.values_list("cohort__name", flat=True)) == {"labelstudio"}
    # predictions: each model version a judge, its predictions of one task its samples in order
    judgments = Judgment.objects.filter(judge__project__slug="ls").order_by(
        "judge__name", "response__position", "sample", "criterion__external_id")
    assert [(j.judge.name, j.response.external_id, j.sample, j.criterion.external_id, j.verdict or j.option_label)
            for j in judgments] == [
        ("judge-x", "11", 0, "call", MET), ("judge-x", "11", 0, "tone", "good"),
        ("judge-x", "11", 1, "call", NOT_MET), ("judge-x", "11", 1, "tone", "good"),
        ("judge-x", "12", 0, "call", CANNOT_ASSESS), ("judge-x", "12", 0, "tone", "poor"),
        ("judge-y", "11", 0, "call", MET)]
    assert set(Judge.objects.filter(project__slug="ls").values_list("name", "backend")) == {
        ("judge-x", Judge.REPLAY), ("judge-y", Judge.REPLAY)}
    again = format_import(ImportRequest(path=tmp_path / "export.json", project="ls"))
    assert (again["labels"], again["judgments"]) == (0, 0)  # again: nothing new


def test_a_mapping_file_names_the_fields_and_criteria_come_from_the_results_without_a_config(tmp_path, db):
    tasks = [{"id": 1, "data": {"question": "Is a fever of 38 dangerous?", "answer": "Usually not.", "llm": "m-1"},
              "annotations": [_annotation(1, {"id": 3, "email": "doc@example.org"},
                                          [_result("safe", "Yes"),
                                           {"from_name": "clarity", "to_name": "answer", "type": "rating",
                                            "value": {"rating": 4}},
                                           {"from_name": "note", "to_name": "answer", "type": "textarea",
                                            "value": {"text": ["fine"]}}], lead_time=5.0)]},
             {"id": 2, "data": {"question": "Is a fever of 38 dangerous?", "answer": "Yes, go to hospital.", "llm": "m-2"},
              "annotations": [_annotation(2, 3, [_result("safe", "No")], lead_time=2.0)]}]
    path = _write(tmp_path, tasks, config=None)
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"prompt": "question", "response": "answer", "model": "llm"}), encoding="utf-8")
    result = format_import(ImportRequest(path=path, project="mapped", files={"mapping": mapping}))
    assert result["cases"] == 1 and result["responses"] == 2 and result["labels"] == 3
    assert result["left_out"] == {"drafts": 0, "cancelled": 0, "other_results": 1}
    criteria = {c.external_id: c for c in Criterion.objects.filter(project__slug="mapped")}
    assert criteria["safe"].kind == Criterion.BINARY
    assert criteria["clarity"].kind == Criterion.ORDINAL and [o["label"] for o in criteria["clarity"].options] == [
        "1", "2", "3", "4"]
    case = Case.objects.get(project__slug="mapped")
    assert case.external_id == "1" and case.prompt == "Is a fever of 38 dangerous?"  # the first task of the prompt
    labels = Label.objects.order_by("response__position", "criterion__position")
    assert list(labels.values_list("annotator__username", "criterion__external_id", "verdict", "option_label")) == [
        ("labelstudio-3", "safe", MET, None), ("labelstudio-3", "clarity", None, "4"),
        ("labelstudio-3", "safe", NOT_MET, None)]  # the user as an object and as an id: one annotator
    mapping.write_text(json.dumps({"prompt": "question", "answer_field": "answer"}), encoding="utf-8")
    with pytest.raises(CommandError, match=r"mapping.json: unknown key 'answer_field' \(use prompt, response, model,"):
        call_command("import_bundle", str(path), "--project", "mapped", "--mapping", str(mapping))


def test_a_bad_task_is_named_by_file_task_and_field_and_nothing_is_written(tmp_path, db):
    tasks = _tasks()
    tasks[1]["annotations"][0]["result"][1]["value"]["choices"] = ["excellent"]
    with pytest.raises(BundleError, match=r"^export.json line 2: 'excellent' is not a choice of control 'tone'$") as caught:
        format_import(ImportRequest(path=_write(tmp_path / "a", tasks), project="ls"))
    assert caught.value.field == "annotations[0].result[1].value.choices"
    tasks = _tasks()
    tasks[0]["predictions"][1]["result"][1]["value"]["choices"] = ["excellent"]
    with pytest.raises(BundleError, match=r"^export.json line 1: 'excellent' is not a choice of control 'tone'$") as caught:
        format_import(ImportRequest(path=_write(tmp_path / "a2", tasks), project="ls"))
    assert caught.value.field == "predictions[1].result[1].value.choices"
    tasks = _tasks()
    tasks[1]["predictions"][0]["model_version"] = "j" * 300
    with pytest.raises(BundleError, match=r"^export.json line 2: field 'model_version' must be a string of at most 100 "):
        format_import(ImportRequest(path=_write(tmp_path / "a3", tasks), project="ls"))
    tasks = _tasks()
    tasks[1]["predictions"][0]["evalsite_sample"] = 40_000  # found by the bundle importer, named back
    with pytest.raises(BundleError, match=r"^export.json line 2: ") as caught:
        format_import(ImportRequest(path=_write(tmp_path / "a4", tasks), project="ls"))
    assert caught.value.field == "predictions[0].evalsite_sample"
    tasks = _tasks()
    tasks[2]["data"]["model"] = "m" * 500  # found by the bundle importer, named back in the task's terms
    with pytest.raises(BundleError, match=r"^export.json line 3: ") as caught:
        format_import(ImportRequest(path=_write(tmp_path / "b", tasks), project="ls"))
    assert caught.value.field == "data.model"
    tasks = _tasks()
    del tasks[0]["data"]["response"]
    with pytest.raises(CommandError, match=r"nothing was written: export.json line 1: data.response must be a string"):
        call_command("import_bundle", str(_write(tmp_path / "c", tasks)), "--project", "ls")
    with pytest.raises(CommandError, match=r"export.json: a Label Studio export names no project: import it from its "
                                           r"project's page or give the project's slug \(--project SLUG\)"):
        call_command("import_bundle", str(_write(tmp_path / "d", _tasks())))
    assert _counts() == (0, 0, 0, 0)


def test_export_writes_tasks_and_a_labeling_config_byte_stable(tmp_path, db):
    call_command("import_bundle", str(write_bundle(tmp_path / "mini")))
    project = Project.objects.get(slug="mini")
    first = format_export(project=project, out_dir=tmp_path / "a", name="labelstudio")
    second = format_export(project=project, out_dir=tmp_path / "b", name="labelstudio")
    assert first == second and set(first["files"]) == {"tasks.json", "config.xml"}
    for name in first["files"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    tasks = json.loads((tmp_path / "a" / "tasks.json").read_text(encoding="utf-8"))
    assert [t["data"]["response_id"] for t in tasks] == ["r1", "r2", "r3", "r4"] and [t["id"] for t in tasks] == [1, 2, 3, 4]
    assert tasks[0]["data"]["prompt"] == "Chest pain for two hours, what should I do?"
    assert tasks[2]["data"]["prompt"] == "user: My child has a fever."  # a chat case's messages as text
    users = {a["evalsite_username"]: a["completed_by"] for t in tasks for a in t["annotations"]}
    assert users == {"ann1": 1, "ann2": 2, "ann3": 3, "chk1": 4}
    checker = [a for a in tasks[0]["annotations"] if a["ground_truth"]]
    assert [(r["from_name"], r["value"]) for a in checker for r in a["result"]] == [("c1-abx", {"choices": ["Not met"]})]
    ann1 = next(a for a in tasks[0]["annotations"] if a["evalsite_username"] == "ann1")
    assert [(r["from_name"], r["value"]["choices"]) for r in ann1["result"]] == [
        ("c1-ecg", ["Met"]), ("c1-call", ["Met"]), ("c1-abx", ["Not met"])]
    config = (tmp_path / "a" / "config.xml").read_text(encoding="utf-8")
    assert '<Choices name="c1-ecg" toName="response" choice="single" showInline="true">' in config
    assert '<Choice value="ok" hint="value 0.5" />' in config and '<Choice value="Cannot assess" />' in config
    assert first["counts"]["tasks.json"] == 4 and first["counts"]["config.xml"] == 5
    # judge-a's judgments as predictions: its met decision on r1; the invalid output (r2) and the bare
    # value (r3) have no choice to show: left out and counted
    assert tasks[0]["predictions"] == [{"model_version": "judge-a", "evalsite_sample": 0, "result": [
        {"from_name": "c1-ecg", "to_name": "response", "type": "choices", "value": {"choices": ["Met"]}}]}]
    assert [t["predictions"] for t in tasks[1:]] == [[], [], []]
    assert first["counts"]["predictions"] == 1 and first["counts"]["left_out"] == {
        "value_labels": 0, "invalid_judgments": 1, "value_judgments": 1}


def test_label_studio_to_evalsite_to_label_studio_gives_the_same_tasks(tmp_path, db, capsys):
    original = _tasks()
    path = _write(tmp_path / "in", original)
    call_command("import_bundle", str(path), "--format", "labelstudio", "--project", "ls", "--json")
    assert json.loads(capsys.readouterr().out)["labels"] == 12
    call_command("export_bundle", "--project", "ls", "--out", str(tmp_path / "out"), "--format", "labelstudio", "--json")
    result = json.loads(capsys.readouterr().out)
    assert set(result["files"]) == {"tasks.json", "config.xml"} and result["counts"]["tasks.json"] == 3
    exported = json.loads((tmp_path / "out" / "tasks.json").read_text(encoding="utf-8"))
    assert _essential(exported) == _essential(original)
    # and the exported pair imports again (config.xml beside tasks.json) into a project that equals the first
    copy_path = tmp_path / "out" / "tasks.json"
    again = format_import(ImportRequest(path=copy_path, project="ls2"))
    assert again["labels"] == 12 and again["criteria"] == 2 and again["judgments"] == 7
    format_export(project=Project.objects.get(slug="ls2"), out_dir=tmp_path / "out2", name="labelstudio")
    assert (tmp_path / "out2" / "tasks.json").read_bytes() == copy_path.read_bytes()
    assert (tmp_path / "out2" / "config.xml").read_bytes() == (tmp_path / "out" / "config.xml").read_bytes()
    assert copy.deepcopy(original) == _tasks()


def test_an_export_is_uploaded_on_its_projects_page_as_a_background_job(tmp_path, db, client, settings,
                                                                       django_capture_on_commit_callbacks):
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-1234"))
    Project.objects.create(slug="ls", name="From Label Studio")
    body = json.dumps(_tasks()).encode("utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/projects/ls/import/", {"bundle": SimpleUploadedFile("export.json", body),
                                                      "format": "labelstudio"})
    assert answer.status_code in (200, 302)
    job = DataJob.objects.get(kind="import")
    assert job.status == "finished", job.error
    assert job.result["responses"] == 3 and job.result["left_out"] == {"drafts": 1, "cancelled": 1, "other_results": 0}
    assert Project.objects.get(slug="ls").name == "From Label Studio"  # the project's own name kept
    assert Criterion.objects.get(project__slug="ls", external_id="call").kind == Criterion.BINARY  # no config: inferred


def test_an_export_uploaded_as_a_new_project_goes_into_the_project_named(tmp_path, db, client, settings,
                                                                         django_capture_on_commit_callbacks):
    """The home page's "new project" takes a Label Studio export (which names no project) into the
    project named under Project, made when new."""
    settings.EVALSITE_JOBS_DIR = str(tmp_path / "jobs")
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-1234"))
    body = json.dumps(_tasks()).encode("utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/projects/import/", {"bundle": SimpleUploadedFile("export.json", body),
                                                   "format": "labelstudio", "project": "from-ls"})
    job = DataJob.objects.get(kind="import")
    assert answer.status_code == 302 and job.status == "finished", job.error
    assert job.project.slug == "from-ls" and job.result["labels"] == 12
    assert Label.objects.filter(response__project__slug="from-ls").count() == 12
