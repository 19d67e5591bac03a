"""CHARM-100 (demo.charm100): the vendored Autorubric file, and the demo project the app's Autorubric
importer makes of it, which is the project the demo's own converter made before the importer existed
(``charm100_expected.json``: that project's ``export_bundle --json`` and its project.json)."""

import collections
import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Label
from demo.charm100 import MAPPING, VENDORED_SOURCE, charm100_import

NOTICE_SHA256 = "b0ac1a0b9d5eca2c2d4a9c5d56f11759e8c29cf88d75b524f5f2ba300b08db3c"
EXPECTED = json.loads((Path(__file__).parent / "charm100_expected.json").read_text(encoding="utf-8"))


def test_vendored_file_matches_notice_and_licence():
    assert hashlib.sha256(VENDORED_SOURCE.read_bytes()).hexdigest() == NOTICE_SHA256
    assert NOTICE_SHA256 in (VENDORED_SOURCE.parent / "NOTICE.md").read_text(encoding="utf-8")
    licence = (VENDORED_SOURCE.parent / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Copyright (c) 2025 Delip Rao" in licence


def _export(out: Path, capsys) -> dict:
    call_command("export_bundle", "--project", "charm-100", "--out", str(out), "--json")
    return json.loads(capsys.readouterr().out)


@pytest.mark.django_db
def test_the_importer_gives_the_demo_project_the_converter_gave(tmp_path, capsys):
    counts = charm100_import()
    assert counts == {"project": "charm-100", "cases": 100, "criteria": 6, "responses": 100, "labels": 600,
                      "judgments": 0}
    export = _export(tmp_path / "out", capsys)
    assert json.loads((tmp_path / "out" / "project.json").read_text(encoding="utf-8")) == EXPECTED["project"]
    assert export == EXPECTED["export"]  # every exported file, byte for byte (by its sha256)


@pytest.mark.django_db
def test_the_command_line_import_is_the_same(tmp_path, capsys):
    call_command("import_bundle", str(VENDORED_SOURCE), "--mapping", str(MAPPING), "--json")
    assert json.loads(capsys.readouterr().out)["labels"] == 600
    assert _export(tmp_path / "out", capsys) == EXPECTED["export"]
    assert charm100_import()["labels"] == 0  # again: nothing new


@pytest.mark.django_db
def test_rubric_and_labels():
    charm100_import()
    project = EXPECTED["project"]
    kinds = {c["criterion_id"]: c["kind"] for c in project["rubric"]}
    assert kinds == {"satisfaction": "ordinal", "helpfulness": "ordinal", "naturalness": "ordinal",
                     "response_length": "nominal", "factual_accuracy": "binary", "specificity": "ordinal"}
    assert sum(c["weight"] for c in project["rubric"]) == 43
    assert [o["label"] for c in project["rubric"] for o in c["options"] if o["na"]] == [
        "N/A - question doesn't require recommendations"]
    labels = Label.objects.filter(project__slug="charm-100")
    binary = collections.Counter(labels.filter(criterion__external_id="factual_accuracy").values_list("verdict", flat=True))
    assert binary == {"met": 72, "not_met": 28}
    assert labels.filter(option_label__startswith="N/A").count() == 9
    assert labels.exclude(rationale="").count() == 100  # each item's description, on its first label


@pytest.mark.django_db
def test_cases_hold_system_and_user_turns():
    charm100_import()
    from annotation.models import Case, Response

    source = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    turns = json.loads(source["items"][0]["submission"])
    case = Case.objects.get(project__slug="charm-100", external_id="charm-001")
    assert [m["role"] for m in case.messages] == ["system", "user"] and case.messages[1]["content"] == turns[1]["content"]
    response = Response.objects.get(case=case)
    assert response.external_id == "charm-001-assistant" and response.text == turns[2]["content"]


@pytest.mark.django_db
def test_null_ground_truth_is_skipped_and_na_is_cannot_assess(tmp_path):
    source = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    source["items"][0]["ground_truth"][5] = None
    source["items"][1]["ground_truth"][4] = "N/A"
    path = tmp_path / "charm100.json"
    path.write_text(json.dumps(source), encoding="utf-8")
    assert charm100_import(source=path)["labels"] == 599
    assert Label.objects.filter(verdict="cannot_assess").count() == 1
