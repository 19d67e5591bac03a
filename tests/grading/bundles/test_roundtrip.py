"""Idempotent re-import, export → import → export byte for byte, manifest hashes, zip input,
and the gold provenance written at export."""
import hashlib
import json
import os
import zipfile

import pytest
from django.core.management import call_command

from annotation.models import Case, ImportBatch, Label, LabelHistory, Project, Response
from grading.bundles import bundle_import, gold_export
from grading.models import Judgment
from tests.bundles import bundle_parts, write_bundle


def snapshot():
    return (
        list(Label.objects.order_by("pk").values_list("pk", "verdict", "option_label", "value", "revision", "updated_at")),
        list(Judgment.objects.order_by("pk").values_list("pk", "verdict", "value", "valid")),
        Case.objects.count(), Response.objects.count(), ImportBatch.objects.count(), LabelHistory.objects.count(),
    )


def read_files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.django_db
class RoundTripTests:
    def test_reimport_changes_nothing(self, mini_bundle):
        first = bundle_import(path=mini_bundle)
        assert first.as_dict() == {"project": "mini", "cases": 2, "criteria": 5, "responses": 4, "labels": 34, "judgments": 3}
        before = snapshot()
        again = bundle_import(path=mini_bundle)
        assert again.as_dict() == {"project": "mini", "cases": 0, "criteria": 0, "responses": 0, "labels": 0, "judgments": 0}
        assert snapshot() == before

    def test_reimport_with_a_changed_label_updates_it_with_history(self, tmp_path, mini_project):
        parts = bundle_parts()
        parts["labels"][0]["verdict"] = "not_met"
        result = bundle_import(path=write_bundle(tmp_path / "v2", parts))
        assert result.labels == 1 and result.cases == 0
        label = Label.objects.get(response__external_id="r1", criterion__external_id="c1-ecg", annotator__username="ann1")
        assert label.verdict == "not_met" and label.revision == 2
        first, entry = label.history.order_by("id")  # the first import's row, then the re-import's
        assert (first.action, first.old, first.new["verdict"]) == ("import", None, "met")
        assert (entry.action, entry.old["verdict"], entry.new["verdict"]) == ("import", "met", "not_met")
        assert entry.note.startswith("replace (re-import of")

    def test_export_import_export_is_byte_identical(self, tmp_path, mini_project):
        first = tmp_path / "first"
        gold_export(project=mini_project, out_dir=first)
        Project.objects.all().delete()
        Label.objects.all().delete()
        bundle_import(path=first)
        second = tmp_path / "second"
        gold_export(project=Project.objects.get(slug="mini"), out_dir=second)
        a, b = read_files(first), read_files(second)
        assert a.keys() == b.keys()
        for name in a:
            if name == "manifest.json":
                ma, mb = json.loads(a[name]), json.loads(b[name])
                ma.pop("exported_at"), mb.pop("exported_at")
                assert ma == mb
            else:
                assert a[name] == b[name], name

    def test_manifest_hashes_every_file(self, tmp_path, mini_project):
        out = tmp_path / "out"
        result = gold_export(project=mini_project, out_dir=out)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["format_version"] == 2
        assert set(manifest["files"]) == {p.name for p in out.iterdir()} - {"manifest.json"}
        for name, digest in manifest["files"].items():
            assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
        assert manifest["files"] == result["files"]
        assert manifest["counts"]["labels.jsonl"] == 34
        assert manifest["counts"]["gold.jsonl"] == 11
        assert manifest["rubric_versions"]["project"] == mini_project.rubric_versions.get(case=None).content_hash
        assert set(manifest["rubric_versions"]["cases"]) == {"c1"}
        assert manifest["provenance"] == {"agreed": 10, "adjudicated": 0, "single-cohort": 0, "unresolved": 1}
        assert manifest["counts"]["adjudications.jsonl"] == 0 and manifest["counts"]["gold.csv"] == 12  # header + 11

    def test_gold_provenance_and_slices(self, tmp_path, mini_project):
        out = tmp_path / "out"
        gold_export(project=mini_project, out_dir=out)
        gold = [json.loads(line) for line in (out / "gold.jsonl").read_text().splitlines()]
        by_key = {(g["response_id"], g["criterion_id"]): g for g in gold}
        # Both cohorts agree: agreed. group-2 flipped r2/c1-ecg: unresolved with no decision.
        assert by_key[("r1", "c1-call")]["provenance"] == "agreed" and by_key[("r1", "c1-call")]["verdict"] == "met"
        disputed = by_key[("r2", "c1-ecg")]
        assert disputed["provenance"] == "unresolved" and disputed["verdict"] is None
        assert disputed["cohort_decisions"] == {"group-1": {"verdict": "not_met"}, "group-2": {"verdict": "met"}}
        # The checker's label wins inside group-1 (both annotators said not_met too).
        assert by_key[("r1", "c1-abx")]["cohort_decisions"]["group-1"] == {"verdict": "not_met"}
        assert by_key[("r3", "tone")]["option"] == "good"
        high = (out / "gold.high.jsonl").read_text().splitlines()
        low = (out / "gold.low.jsonl").read_text().splitlines()
        assert len(high) == 9 and len(low) == 2 and (out / "gold.medium.jsonl").read_text() == ""

    def test_zip_bundle_imports_like_the_directory(self, tmp_path, mini_bundle):
        path = tmp_path / "mini.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for p in mini_bundle.iterdir():
                zf.write(p, f"mini/{p.name}")
        assert bundle_import(path=path).labels == 34
        assert bundle_import(path=mini_bundle).labels == 0


@pytest.mark.django_db
class CommandTests:
    def test_import_and_export_commands_print_one_json_object(self, tmp_path, mini_bundle, capsys):
        call_command("import_bundle", str(mini_bundle), "--json")
        out = json.loads(capsys.readouterr().out)
        assert out == {"project": "mini", "cases": 2, "criteria": 5, "responses": 4, "labels": 34, "judgments": 3}
        call_command("export_gold", "--project", "mini", "--out", str(tmp_path / "x"), "--json")
        out = json.loads(capsys.readouterr().out)
        assert set(out) == {"files", "counts"} and "gold.jsonl" in out["files"]

    def test_bad_bundle_exits_nonzero_with_one_line(self, tmp_path):
        import subprocess
        import sys

        parts = bundle_parts()
        parts["labels"][2]["criterion_id"] = "x"
        bad = write_bundle(tmp_path / "bad", parts)
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalsite.settings.test",
               "DATABASE_URL": "sqlite:///" + str(tmp_path / "cli.sqlite3")}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], check=True, env=env)
        proc = subprocess.run(
            [sys.executable, "manage.py", "import_bundle", str(bad), "--json"], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 1
        assert proc.stdout == ""
        assert proc.stderr.strip().splitlines()[-1] == (
            "CommandError: import failed, nothing was written: labels.jsonl line 3: unknown criterion_id 'x'"
        )

    def test_export_unknown_project(self, tmp_path):
        from django.core.management.base import CommandError

        with pytest.raises(CommandError, match="unknown project 'nope'"):
            call_command("export_gold", "--project", "nope", "--out", str(tmp_path))


def test_export_rows_of_an_empty_filter_are_none_not_an_error(db):
    from annotation.models import Label
    from grading.bundles.export_io import cursor_rows

    assert list(cursor_rows(Label.objects.filter(response_id__in=[]).values_list("id"))) == []
