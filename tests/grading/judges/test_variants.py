"""Rubric-perturbation robustness (issue 13, point 5): paraphrased criterion texts in bundles
(outside the rubric hash), a judge run on the reversed or paraphrased rubric as its own judge
NAME~VARIANT against the loopback server, and the judges page's table comparing MF1 and QWK
against each cohort per variant."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Criterion, Project, RubricVersion
from grading.bundles import BundleError, bundle_import, gold_export
from grading.models import Judge
from tests.bundles import bundle_parts, write_bundle

PARAPHRASE = "Does the answer speak to the patient in a fitting way?"


def with_variants():
    parts = bundle_parts()
    parts["project"]["rubric"][0]["variants"] = {"paraphrased": PARAPHRASE}
    parts["cases"][0]["criteria"][0]["variants"] = {"paraphrased": "Is an ECG advised?"}
    return parts


def test_variants_travel_in_bundles_outside_the_rubric_hash(db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "plain", bundle_parts()))
    hashes = sorted(RubricVersion.objects.values_list("content_hash", flat=True))
    bundle_import(path=write_bundle(tmp_path / "varied", with_variants()))
    assert sorted(RubricVersion.objects.values_list("content_hash", flat=True)) == hashes
    assert Criterion.objects.get(external_id="tone").variants == {"paraphrased": PARAPHRASE}
    gold_export(project=Project.objects.get(slug="mini"), out_dir=tmp_path / "out")
    assert json.loads((tmp_path / "out" / "project.json").read_text())["rubric"][0]["variants"] == {"paraphrased": PARAPHRASE}
    case = json.loads((tmp_path / "out" / "cases.jsonl").read_text().splitlines()[0])
    assert case["criteria"][0]["variants"] == {"paraphrased": "Is an ECG advised?"}


@pytest.mark.parametrize("variants, message", [
    ({"shouted": "X"}, "unknown variant 'shouted'"), ({"paraphrased": ""}, "must be a non-empty text"), ("x", "must be an object"),
])
def test_bad_variants_are_refused(db, tmp_path, variants, message):
    parts = bundle_parts()
    parts["project"]["rubric"][0]["variants"] = variants
    with pytest.raises(BundleError, match=message):
        bundle_import(path=write_bundle(tmp_path / "bad", parts))


def run(*args):
    out = io.StringIO()
    call_command("run_judge", "--project", "mini", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_judge_runs_on_reversed_and_paraphrased_rubrics_as_its_own_judge(db, tmp_path, chat_server):
    from grading.reports.judges import judges_page

    bundle_import(path=write_bundle(tmp_path / "varied", with_variants()))
    project = Project.objects.get(slug="mini")
    Judge.objects.create(project=project, name="llm", backend=Judge.OPENAI, model="m", base_url=chat_server.url,
                         condition=Judge.ANONYMIZED, settings={"json_mode": True})
    base = run("--judge", "llm")
    asked = len(chat_server.requests)
    paraphrased = run("--judge", "llm", "--variant", "paraphrased")
    # its own judgments; only the prompts the paraphrases change are asked again (the rest are the same prompts)
    assert paraphrased["judgments"] == base["judgments"] == 11
    texts = [r["messages"][-1]["content"] for r in chat_server.requests[asked:]]
    assert paraphrased["calls"] == len(texts) == paraphrased["judgments"] - paraphrased["cache_hits"]
    assert all(PARAPHRASE in t or "Is an ECG advised?" in t for t in texts) and texts
    assert not any("Tone fits the patient" in t or "Recommends an ECG" in t for t in texts)
    derived = Judge.objects.get(project=project, name="llm~paraphrased")
    assert derived.settings == {"json_mode": True, "variant": "paraphrased", "variant_of": "llm"} and derived.base_url == chat_server.url

    asked = len(chat_server.requests)
    run("--judge", "llm", "--variant", "reversed")
    users = [r["messages"][-1]["content"] for r in chat_server.requests[asked:]]
    tone = next(u for u in users if "Tone fits the patient" in u)
    assert tone.split("<options>\n", 1)[1].startswith("- n/a\n- good\n- ok\n- poor")  # the options last to first
    with pytest.raises(Exception, match="invalid choice"):
        run("--judge", "llm", "--variant", "shuffled")

    table = judges_page(project=project)["tables"]["variants"]
    rows = {(r[1], r[3]): r for r in table["rows"]}
    assert set(rows) == {(v, c) for v in ("as written", "paraphrased", "reversed") for c in ("cohort:group-1", "cohort:group-2")}
    assert rows[("reversed", "cohort:group-1")][2] == "judge:llm~reversed"
    assert rows[("as written", "cohort:group-1")][4] is not None  # MF1 over the binary criteria
    # the default script picks the first listed option: "poor" as written, "n/a" (no value) when reversed
    assert rows[("as written", "cohort:group-1")][7] == 1 and rows[("reversed", "cohort:group-1")][7] == 0
