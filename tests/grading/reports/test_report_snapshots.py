"""Every report's answer on the demo projects is pinned (issue 23, "Done when"): each command's
JSON (with its defaults and with non-default options), the API endpoint's answer (the command's
JSON again) and each report page's data and charts, compared with golden files written from the
code before the reports moved onto the registry (``tests/grading/reports/snapshots/``).

Floats are compared rounded to 10 significant digits (a sum taken in another order may differ in
its last bits). The answers hold no timestamps and no database ids (rows are named by public ids).
``EVALSITE_SNAPSHOTS=write`` rewrites the golden files (only when a change of answer is meant).
"""
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

SNAPSHOTS = Path(__file__).parent / "snapshots"
WRITE = os.environ.get("EVALSITE_SNAPSHOTS") == "write"
SMALL_CLINICAL = {"n_cases": 6, "n_criteria": 8, "human_answer_cases": 2}
TRIMMED_CASES = 5
PROJECTS = ("clinical-demo", "charm-100", "devai")
pytestmark = pytest.mark.django_db


def _small_clinical(out_dir, **options):
    from demo.clinical import generate_clinical

    return generate_clinical(out_dir, **{**options, **{k: min(options.get(k, v), v) for k, v in SMALL_CLINICAL.items()}})


def _trimmed_charm100(**options):
    """CHARM-100 imported with only its first items (so its first cases, with their responses and labels)."""
    from demo.charm100 import VENDORED_SOURCE, charm100_import

    data = json.loads(VENDORED_SOURCE.read_text(encoding="utf-8"))
    data["items"] = data["items"][:TRIMMED_CASES]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "charm100.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return charm100_import(source=path, **options)


def _trimmed(convert):
    """``convert`` keeping only its first cases, with their responses, labels and judgments."""
    def run(out_dir, **options):
        counts = convert(out_dir, **options)
        folder = Path(out_dir)

        def rows(name):
            return [json.loads(line) for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]

        def write(name, kept):
            (folder / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept), encoding="utf-8")

        cases = rows("cases")[:TRIMMED_CASES]
        responses = [r for r in rows("responses") if r["case_id"] in {c["case_id"] for c in cases}]
        kept = {r["response_id"] for r in responses}
        write("cases", cases)
        write("responses", responses)
        for name in ("labels", "judgments"):
            if (folder / f"{name}.jsonl").exists():
                write(name, [row for row in rows(name) if row["response_id"] in kept])
        return counts
    return run


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    """The demo projects (small), loaded once for the module and rolled back after it."""
    from django.db import transaction

    from grading.management.commands import load_demo
    from tests.roles import grant

    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch, transaction.atomic():
        cache.clear()
        patch.setattr(load_demo, "generate_clinical", _small_clinical)
        patch.setattr(load_demo, "charm100_import", _trimmed_charm100)
        patch.setattr(load_demo, "convert_devai", _trimmed(load_demo.convert_devai))
        call_command("load_demo", "--json", stdout=io.StringIO())
        from annotation.models import Project

        user = get_user_model().objects.create_user("snapshot-viewer")
        for project in Project.objects.filter(slug__in=PROJECTS):
            grant(user, project, "viewer")
        yield user
        transaction.set_rollback(True)


def _sources(slug: str) -> dict:
    from annotation.models import Cohort
    from grading.models import Judge

    cohorts = [f"cohort:{c.name}" for c in Cohort.objects.filter(project__slug=slug).order_by("position", "pk")]
    judges = list(Judge.objects.filter(project__slug=slug).order_by("name").values_list("name", flat=True))
    return {"cohorts": cohorts, "judges": judges}


def _command_cases(slug: str) -> list[tuple[str, dict]]:
    """(command, options) for every report command: its defaults, and options that change its answer."""
    s = _sources(slug)
    cohorts, judges = s["cohorts"], [f"judge:{j}" for j in s["judges"]]
    first = cohorts[0] if cohorts else (judges[0] if judges else "gold")
    other = (cohorts[1:] + judges + ["gold"])[0]
    judge = judges[0] if judges else other
    cases = [
        ("agreement", {"a": first, "b": other}),
        ("agreement", {"a": first, "b": judge, "cannot_assess": "skip", "ci": True}),
        ("agreement", {"a": "gold", "b": judge, "models": "physician"}),
        ("reliability", {"source": first}),
        ("reliability", {"source": first, "level": "interval", "ci": True}),
        ("reliability_report", {"a": first, "b": other}),
        ("reliability_report", {"a": first, "b": judge, "by": "tag", "ci": True}),
        ("pairwise_agreement", {"source": first}),
        ("pairwise_agreement", {"source": first, "grader": judge, "by": "tag", "min_n": 0}),
        ("coverage", {"source": first}),
        ("coverage", {"source": judge, "k": 2, "sensitivity": "1,3", "ci": True}),
        ("calibrate_k", {"source": first}),
        ("scores", {"source": first}),
        ("scores", {"source": judge, "cannot_assess": "zero", "length_penalty": "50,400,0.5", "ci": True}),
        ("cross_grader", {"a": first, "b": judge}),
        ("cross_grader", {"a": first, "b": other, "ci": True, "exclude_models": "physician"}),
        ("verbosity", {"source": first}),
        ("verbosity", {"source": judge, "k": 2, "ci": True}),
        ("bias_matrix", {"condition": "attributed"}),
        ("bias_matrix", {"condition": "anonymized", "reference": first, "scale": "unit", "human": "decision"}),
        ("trait_scores", {"source": first}),
        ("trait_scores", {"source": judge, "reference": first, "ci": True}),
    ]
    cases += [("stability", {"judge": name}) for name in s["judges"][:2]]
    cases += [("stability", {"judge": name, "ci": True}) for name in s["judges"][:1]]
    return cases


def _page_cases(slug: str) -> list[tuple[str, dict]]:
    s = _sources(slug)
    cohorts, judges = s["cohorts"], [f"judge:{j}" for j in s["judges"]]
    first = cohorts[0] if cohorts else (judges[0] if judges else "gold")
    judge = judges[0] if judges else "gold"
    return [
        ("agreement", {}), ("agreement", {"a": first, "b": judge, "strategy": "skip"}),
        ("coverage", {}), ("coverage", {"source": judge, "k": "2", "sensitivity": "1,3", "ci": "1"}),
        ("judges", {}), ("judges", {"strategy": "partial", "ci": "1"}),
        ("bias", {}), ("bias", {"scale": "unit", "human": "decision", "ci": "1"}),
        ("calibration", {}), ("calibration", {"reference": first, "strategy": "zero"}),
        ("traits", {}), ("traits", {"source": judge, "reference": "none", "ci": "1"}),
        ("reliability", {}), ("reliability", {"a": first, "b": judge, "by": "model", "ci": "1"}),
        ("scores", {}), ("scores", {"source": judge, "strategy": "fail", "length_penalty": "50,400,0.5",
                                    "length_unit": "characters", "models": "physician"}),
    ]


def _rounded(value):
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def _plain(value):
    """The JSON form of ``value`` (numpy numbers and tuples as the command prints them), rounded."""
    return _rounded(json.loads(json.dumps(value, sort_keys=True, default=str)))


def _command(command: str, slug: str, options: dict) -> dict:
    argv = [f"--project={slug}"]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [f"{flag}={value}"]
    out = io.StringIO()
    try:
        call_command(command, *argv, "--json", stdout=out, stderr=io.StringIO())
    except Exception as exc:  # a domain error is an answer too
        return {"__error__": f"{exc.__class__.__name__}: {exc}"}
    return json.loads(out.getvalue())


def _compare(name: str, answer: dict) -> None:
    path = SNAPSHOTS / f"{name}.json"
    text = json.dumps(_plain(answer), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    if WRITE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not WRITE:
            pytest.fail(f"no golden file {path.name}: written now; run again")
    now = json.loads(text)
    before = json.loads(path.read_text(encoding="utf-8"))
    assert now == before, f"{name} changed: " + "; ".join(_differences(now, before)[:8])


def _differences(now, before, where: str = "") -> list[str]:
    """Where two JSON values differ, as "path: now != before" (what a failure says)."""
    if isinstance(now, dict) and isinstance(before, dict):
        return [d for key in sorted(set(now) | set(before))
                for d in _differences(now.get(key, "<missing>"), before.get(key, "<missing>"), f"{where}.{key}")]
    if isinstance(now, list) and isinstance(before, list) and len(now) == len(before):
        return [d for i, (a, b) in enumerate(zip(now, before)) for d in _differences(a, b, f"{where}[{i}]")]
    return [] if now == before else [f"{where or '.'}: {str(now)[:200]} != {str(before)[:200]}"]


def _label(options: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in sorted(options.items())).replace(":", "_").replace("/", "_").replace(",", "_") or "default"


@pytest.mark.parametrize("slug", PROJECTS)
def test_commands_and_api_answer_as_before(demo, slug):
    client = Client()
    client.force_login(demo)
    for command, options in _command_cases(slug):
        cache.clear()
        answer = _command(command, slug, options)
        _compare(f"command-{slug}-{command}-{_label(options)}", answer)
        if "__error__" in answer:
            continue
        cache.clear()  # the API computes it again, not from the command's cache entry
        query = {k: ("true" if v is True else v) for k, v in options.items()}
        if "length_penalty" in query:  # the API takes the penalty's numbers (its text can name a cap below FREE)
            free, cap, at_cap = query.pop("length_penalty").split(",")
            query.update(penalty_free=free, penalty_span=int(cap) - int(free), penalty_at_cap=at_cap)
        response = client.get(f"/api/projects/{slug}/reports/{command}/", query)
        assert response.status_code == 200, (command, options, response.content[:300])
        assert _plain(response.json()) == _plain(answer), (command, options)


@pytest.mark.parametrize("slug", PROJECTS)
def test_pages_answer_as_before(demo, slug):
    client = Client()
    client.force_login(demo)
    for page, query in _page_cases(slug):
        cache.clear()
        response = client.get(f"/projects/{slug}/reports/{page}/", query)
        assert response.status_code == 200, (page, query)
        context = response.context
        answer = {"params": context["params"], "error": context["error"], "result": context["result"],
                  "charts": {k: str(v) for k, v in (context["charts"] or {}).items()}}
        _compare(f"page-{slug}-{page}-{_label(query)}", answer)
        tables = sorted(((context["result"] or {}).get("tables") or {}))
        if tables:  # the first table's CSV, byte for byte
            csv = client.get(f"/projects/{slug}/reports/{page}/", {**query, "format": "csv", "table": tables[0]})
            assert csv.status_code == 200
            _compare(f"csv-{slug}-{page}-{_label(query)}", {"table": tables[0], "csv": csv.content.decode()})
