"""``manage.py run_judge`` (SPEC §5): one JSON object, synchronous, cached on re-run."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from grading.models import Judge

KEYS = {"run", "judgments", "invalid", "cache_hits", "calls", "cost_usd", "seconds"}


def run_json(*args) -> dict:
    out = StringIO()
    call_command("run_judge", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_run_judge_prints_the_spec_fields_and_reruns_from_cache(mini_project, chat_server):
    Judge.objects.create(project=mini_project, name="llm", backend=Judge.OPENAI, model="m", base_url=chat_server.url,
                         price_in_per_mtok=1, price_out_per_mtok=2)
    first = run_json("--project", "mini", "--judge", "llm")
    assert set(first) == KEYS
    assert (first["judgments"], first["invalid"], first["cache_hits"], first["calls"]) == (11, 0, 0, 11)
    assert first["cost_usd"] == pytest.approx(11 * (10 * 1 + 5 * 2) / 1e6)
    second = run_json("--project", "mini", "--judge", "llm")
    assert (second["calls"], second["cache_hits"], second["cost_usd"], second["run"]) == (0, 11, 0.0, first["run"] + 1)


def test_run_judge_slices_and_baseline(mini_project):
    Judge.objects.create(project=mini_project, name="base", backend=Judge.BASELINE)
    result = run_json("--project", "mini", "--judge", "base", "--cases", "c2")
    assert (result["judgments"], result["calls"]) == (2, 0)


def test_bad_arguments_fail_with_one_line(mini_project):
    with pytest.raises(CommandError, match="unknown project 'nope'"):
        call_command("run_judge", "--project", "nope", "--judge", "x", "--json")
    with pytest.raises(CommandError, match="unknown judge 'x'"):
        call_command("run_judge", "--project", "mini", "--judge", "x", "--json")
    Judge.objects.create(project=mini_project, name="p1", backend=Judge.BASELINE)
    Judge.objects.create(project=mini_project, name="panel", backend=Judge.PANEL, settings={"members": ["p1", "judge-a"]})
    with pytest.raises(CommandError, match="is a panel"):
        call_command("run_judge", "--project", "mini", "--judge", "panel", "--json")


def test_a_failing_run_exits_non_zero_with_one_line(mini_project, monkeypatch):
    monkeypatch.delenv("MISSING_JUDGE_KEY", raising=False)
    Judge.objects.create(project=mini_project, name="keyless", backend=Judge.OPENAI, model="m",
                         base_url="http://127.0.0.1:9/v1", api_key_env="MISSING_JUDGE_KEY")
    with pytest.raises(CommandError, match=r"^run \d+ failed: environment variable MISSING_JUDGE_KEY is not set$"):
        call_command("run_judge", "--project", "mini", "--judge", "keyless", "--json")


def test_resume_continues_a_stopped_run(mini_project):
    from grading.models import JudgeRun, Judgment

    Judge.objects.create(project=mini_project, name="base", backend=Judge.BASELINE)
    first = run_json("--project", "mini", "--judge", "base")
    Judgment.objects.filter(run_id=first["run"], criterion__external_id="c1-abx").delete()
    JudgeRun.objects.filter(pk=first["run"]).update(status=JudgeRun.STOPPED)
    resumed = run_json("--project", "mini", "--judge", "base", "--resume", str(first["run"]))
    assert (resumed["run"], resumed["judgments"]) == (first["run"], 11)
    assert Judgment.objects.filter(run_id=first["run"]).count() == 11
    with pytest.raises(CommandError, match="cannot be resumed"):
        call_command("run_judge", "--project", "mini", "--judge", "base", "--resume", str(first["run"]), "--json")
