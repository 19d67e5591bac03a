"""gold.csv opens in a spreadsheet as text, never as a formula: every cell that begins with
=, +, -, @, a tab or a carriage return gets a leading apostrophe (ids, models, option labels,
notes), numbers stay numbers, and the CSV agrees with gold.jsonl line for line."""
import csv
import json

from annotation.models import Criterion, Project, Response
from evalsite.spreadsheet import csv_cell
from grading.adjudication.services import adjudication_record
from grading.bundles import bundle_import, gold_export
from tests.bundles import bundle_parts, write_bundle


def test_csv_cell_neutralizes_formulas_and_keeps_numbers():
    assert [csv_cell(v) for v in ("=SUM(A1)", "+1", "-x", "@cmd", "\tx", "\rx")] == [
        "'=SUM(A1)", "'+1", "'-x", "'@cmd", "'\tx", "'\rx"]
    assert (csv_cell("plain"), csv_cell(None), csv_cell(-1.5), csv_cell(0)) == ("plain", "", -1.5, 0)


def test_gold_csv_cells_are_never_formulas(db, tmp_path):
    parts = bundle_parts()
    renames = {"r1": "=HYPERLINK(\"http://x\")", "r2": "+r2"}
    for row in parts["responses"] + parts["labels"] + parts["judgments"]:
        row["response_id"] = renames.get(row["response_id"], row["response_id"])
    for row in parts["responses"]:
        if row["model"] == "model-b":
            row["model"] = "@model-b"
    tone = next(c for c in parts["project"]["rubric"] if c["criterion_id"] == "tone")
    tone["options"] = [{"label": "-poor", "value": -1}, {"label": "ok", "value": 0.5}, {"label": "good", "value": 1}]
    bundle_import(path=write_bundle(tmp_path / "bundle", parts))
    project = Project.objects.get(slug="mini")
    adjudication_record(response=Response.objects.get(external_id="r3"), criterion=Criterion.objects.get(external_id="tone"),
                        user=None, option_label="-poor", note="=cmd|' /C calc'!A0")
    gold_export(project=project, out_dir=tmp_path / "out")

    with open(tmp_path / "out" / "gold.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    gold = [json.loads(line) for line in (tmp_path / "out" / "gold.jsonl").read_text().splitlines()]
    assert [r["response_id"] for r in rows] == [csv_cell(g["response_id"]) for g in gold]
    assert {r["response_id"] for r in rows} >= {"'=HYPERLINK(\"http://x\")", "'+r2"}
    assert "'@model-b" in {r["model"] for r in rows}
    [tone_row] = [r for r in rows if r["response_id"] == "r3" and r["criterion_id"] == "tone"]
    assert (tone_row["option"], tone_row["provenance"], tone_row["note"]) == ("'-poor", "adjudicated", "'=cmd|' /C calc'!A0")
    assert tone_row["value"] == ""  # an option decision: its label, not its value
    for row in rows:  # nothing a spreadsheet would evaluate
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row.values())
