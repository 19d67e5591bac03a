"""Benchmarks of adjudication and gold export (issue 10), callable from ``bench/run.py``:

- ``bench_queue``: the adjudication queue of the 250-case bench project (2,750 responses × 30
  criteria, two cohorts): ``adjudication_queue`` computed in a fresh process (Django started,
  the cache emptied: every label counted), then again after one adjudication (the cohorts'
  decisions from the cache, as on an adjudicator's next request), then again after an
  annotator's labels on another response changed (that response counted again), and ``manage.py
  adjudication_queue --json`` from process start; target ≤ 2 s. Also the queue page's answer
  when nothing is counted yet: it queues the whole count for a worker and says so (milliseconds).
- ``bench_queue_after_import``: the queue page as first opened once an import ended (the import made
  the queue's counts as it ended: the page only reads them); the first look and the second.
- ``bench_item_page``: the adjudication page of the queue's first item (30 criteria, two cohorts)
  after adding four more judges to it, so five judges show; rendered through the test client
  as an adjudicator, median and slowest of several renders; target ≤ 150 ms.
- ``bench_gold_export``: the gold export job (``grading.jobs``: the zip of the bundle, gold.jsonl,
  gold.csv, slices and manifest) of the 2,500-case project (825,000 gold decisions), run by the
  Celery task in a child process (eager, so the child is the worker); wall time, the peak RSS
  of that process and of the largest process it forked to split the export
  (``grading.bundles.exporter.export_processes``); target ≤ 20 s and ≤ 500 MB per process.

Each part runs in its own process with the given ``DATABASE_URL``. CLI:
``python -m bench.adjudication queue|after-import|page|export --slug SLUG``; prints one JSON object.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUEUE_SECONDS_TARGET = 2.0
PAGE_MS_TARGET = 150.0
EXPORT_SECONDS_TARGET = 20.0
EXPORT_RSS_MB_TARGET = 500.0
EXTRA_JUDGES = 4
PAGE_RENDERS = 15


def _env(database_url: str | None) -> dict:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CELERY_TASK_ALWAYS_EAGER"] = "true"
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _child(part: str, slug: str, database_url: str | None) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.adjudication", part, "--slug", slug], cwd=ROOT,
                          env=_env(database_url), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"bench.adjudication {part} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_queue(slug: str, *, database_url: str | None = None) -> dict:
    figures = _child("queue", slug, database_url)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", "adjudication_queue", "--project", slug, "--json"], cwd=ROOT,
                          env=_env(database_url), capture_output=True, text=True, check=True)
    figures["command_seconds"] = round(time.perf_counter() - started, 2)
    figures["command_items"] = json.loads(done.stdout)["n_items"]
    return figures


def bench_queue_after_import(slug: str, *, database_url: str | None = None) -> dict:
    return _child("after-import", slug, database_url)


def bench_item_page(slug: str, *, database_url: str | None = None) -> dict:
    return _child("page", slug, database_url)


def bench_gold_export(slug: str, *, database_url: str | None = None) -> dict:
    return _child("export", slug, database_url)


# --- the parts, each in its own process ------------------------------------------------------

def _queue(slug: str) -> dict:
    """The queue counted from the labels (the cache emptied first), then asked for again after an
    adjudication, as an adjudicator's next request does (the cohorts' decisions from the cache), after
    one response's labels changed and after a response was assigned (each counts that response again)."""
    from django.contrib.auth import get_user_model
    from django.core.cache import cache

    from annotation.models import Assignment, Criterion, Label, Response
    from annotation.services import label_save
    from grading.adjudication.services import adjudication_record
    from grading.reports.adjudication_queue import adjudication_queue
    from grading.sources import project_get

    project = project_get(slug=slug)
    cache.clear()
    page_ms = _counting_page(project)
    cache.clear()
    started = time.perf_counter()
    queue = adjudication_queue(project=project)
    seconds = time.perf_counter() - started
    first = queue.items[0]
    adjudication_record(response=Response.objects.get(pk=first.response_id),
                        criterion=Criterion.objects.get(pk=first.open_criteria[0]), user=None, verdict="met")
    started = time.perf_counter()
    again = adjudication_queue(project=project)
    warm = time.perf_counter() - started
    # An annotator's work on another response changes: its labels, one per criterion, are flipped
    # through the label write service, and the next request counts that response again.
    changed = Response.objects.get(pk=queue.items[-1].response_id)
    labels = list(Label.objects.filter(response=changed, role=Label.ANNOTATOR_ROLE, verdict__in=["met", "not_met"])
                  .select_related("criterion", "cohort", "annotator").order_by("criterion_id", "pk"))
    flipped = list({label.criterion_id: label for label in labels}.values())
    for label in flipped:
        label_save(response=changed, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
                   changed_by=None, verdict="not_met" if label.verdict == "met" else "met", replace=True)
    started = time.perf_counter()
    adjudication_queue(project=project)
    refreshed = time.perf_counter() - started
    # A manager assigns a response to a new annotator of its cohort: that response is counted again.
    assigned = Response.objects.get(pk=queue.items[len(queue.items) // 2].response_id)
    cohort = Label.objects.filter(response=assigned, role=Label.ANNOTATOR_ROLE).values_list("cohort_id", flat=True).first()
    newcomer = get_user_model().objects.create_user(username=f"bench-new-annotator-{time.time_ns()}")
    Assignment.objects.create(project=project, cohort_id=cohort, response=assigned, annotator=newcomer)
    started = time.perf_counter()
    adjudication_queue(project=project)
    after_assignment = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "warm_seconds": round(warm, 3), "changed_seconds": round(refreshed, 3),
            "assigned_seconds": round(after_assignment, 3),
            "counting_page_ms": round(page_ms, 1),
            "n_changed_labels": len(flipped), "n_items": len(queue.items),
            "n_responses": project.responses.count(), "counts": queue.counts, "counts_after": again.counts,
            "target_seconds": QUEUE_SECONDS_TARGET,
            "ok": max(seconds, warm, refreshed, after_assignment) <= QUEUE_SECONDS_TARGET}


def _adjudicator_client(project):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.models import ProjectRole

    user, _ = get_user_model().objects.get_or_create(username="bench-adjudicator")
    ProjectRole.objects.update_or_create(project=project, user=user, defaults={"role": "adjudicator"})
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    return client


@contextmanager
def _counts_recorded():
    """The queue's background counts sent meanwhile, recorded (a list of their arguments), not run."""
    from grading.reports import tasks

    sent: list[dict] = []
    delay, tasks.queue_count_task.delay = tasks.queue_count_task.delay, lambda **kwargs: sent.append(kwargs)
    try:
        yield sent
    finally:
        tasks.queue_count_task.delay = delay


def _after_import(slug: str) -> dict:
    """The queue page as an adjudicator opens it once an import ended: the import made the queue's
    counts as it ended, so the page reads them and queues no count (one queued for a worker is an
    error here; the page never counts the whole project in the request). Seconds of the first look, in
    a fresh process (the code loads with it), and of the second, as a running server answers."""
    from django.urls import reverse

    from grading.sources import project_get

    project = project_get(slug=slug)
    with _counts_recorded() as sent:
        client = _adjudicator_client(project)
        url = reverse("adjudication-queue", args=[project.slug])
        times, pages = [], []
        for _ in range(2):
            started = time.perf_counter()
            pages.append(client.get(url))
            times.append(time.perf_counter() - started)
    for page in pages:
        if page.status_code != 200 or b'id="queue"' not in page.content or sent:
            raise RuntimeError(f"the queue page after the import did not show the queue: {page.status_code}, "
                               f"{len(sent)} count(s) queued")
    return {"first_seconds": round(times[0], 3), "seconds": round(times[1], 3),
            "n_items": pages[1].content.count(b'data-response="')}


def _counting_page(project) -> float:
    """Milliseconds of the queue page's answer when nothing is counted yet (after an import whose
    count no worker has made): it queues the whole count for a worker (here recorded, not run)
    and says so, instead of counting in the request."""
    from django.core.cache import cache
    from django.urls import reverse

    with _counts_recorded() as sent:
        client = _adjudicator_client(project)
        url = reverse("adjudication-queue", args=[project.slug])
        client.get(url)  # code imported, templates compiled: what a running server has done already
        cache.clear()
        sent.clear()
        started = time.perf_counter()
        page = client.get(url)
        took = (time.perf_counter() - started) * 1000
    if page.status_code != 200 or b'id="queue-counting"' not in page.content or len(sent) != 1:
        raise RuntimeError(f"the queue page did not queue its count: {page.status_code}, {len(sent)} sent")
    return took


def _more_judges(project, response) -> int:
    """Four more judges with a decision on every criterion of ``response`` (idempotent)."""
    from annotation.models import Criterion
    from grading.models import Judge, Judgment

    criteria = list(Criterion.objects.filter(rubric_version_id=response.case.rubric_version_id))
    for n in range(EXTRA_JUDGES):
        judge, created = Judge.objects.get_or_create(project=project, name=f"bench-judge-{n}",
                                                     defaults={"backend": "replay", "model": f"bench-model-{n}"})
        if created:
            Judgment.objects.bulk_create(
                Judgment(judge=judge, response=response, criterion=c, rubric_version_id=c.rubric_version_id, sample=0,
                         condition=judge.condition, verdict=("met", "not_met")[(i + n) % 2], valid=True,
                         explanation=f"Judge {n} on criterion {i}: the response {'does' if (i + n) % 2 == 0 else 'does not'} say so.",
                         evidence=[response.text[:40]])
                for i, c in enumerate(criteria))
    return Judge.objects.filter(project=project, judgments__response=response).distinct().count()


def _page(slug: str) -> dict:
    from django.urls import reverse

    from annotation.models import Response
    from grading.reports.adjudication_queue import adjudication_queue
    from grading.sources import project_get

    project = project_get(slug=slug)
    first = adjudication_queue(project=project).items[0]
    response = Response.objects.select_related("case").get(pk=first.response_id)
    n_judges = _more_judges(project, response)
    client = _adjudicator_client(project)
    url = reverse("adjudication-item", args=[slug, response.pk])
    page = client.get(url)  # warm: templates compiled, code imported
    if page.status_code != 200 or b"adjudication-row" not in page.content:
        raise RuntimeError(f"the adjudication page answered {page.status_code}")
    times = []
    for _ in range(PAGE_RENDERS):
        started = time.perf_counter()
        page = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    median = times[len(times) // 2]
    return {"median_ms": round(median, 1), "max_ms": round(times[-1], 1), "renders": PAGE_RENDERS,
            "criteria": page.content.count(b'class="crit adjudication-row'), "judges": n_judges,
            "cohorts": project.cohorts.count(), "bytes": len(page.content), "target_ms": PAGE_MS_TARGET,
            "ok": median <= PAGE_MS_TARGET}


def _export(slug: str) -> dict:
    """The view's own entry point: ``data_job_export_start`` queues the task on commit; with
    ``CELERY_TASK_ALWAYS_EAGER`` the task runs right here, so this process's peak RSS is the task's."""
    from django.contrib.auth import get_user_model

    from annotation.models import Response
    from grading.bundles.exporter import export_processes
    from grading.jobs import data_job_export_start, job_path
    from grading.models import DataJob
    from grading.sources import project_get

    project = project_get(slug=slug)
    user, _ = get_user_model().objects.get_or_create(username="bench-exporter", defaults={"is_superuser": True})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    job = data_job_export_start(project=project, user=user)
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    if job.status != DataJob.FINISHED:
        raise RuntimeError(f"export job {job.status}: {job.error}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the forked exporters (0: none)
    path = job_path(job)
    size_mb = path.stat().st_size / 2**20
    path.unlink()
    n_responses = Response.objects.filter(project=project).count()
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak), "rss_before_mb": round(rss_before),
            "processes": export_processes(n_responses), "child_peak_rss_mb": round(child_peak),
            "gold_decisions": job.result["counts"].get("gold.jsonl"), "responses": n_responses,
            "zip_mb": round(size_mb, 1), "provenance": job.result["provenance"],
            "target": f"<= {EXPORT_SECONDS_TARGET:g} s, <= {EXPORT_RSS_MB_TARGET:g} MB",
            "ok": seconds <= EXPORT_SECONDS_TARGET and max(peak, child_peak) <= EXPORT_RSS_MB_TARGET}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adjudication", description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["queue", "after-import", "page", "export"])
    parser.add_argument("--slug", required=True)
    args = parser.parse_args(argv)
    import django

    django.setup()
    result = {"queue": _queue, "after-import": _after_import, "page": _page, "export": _export}[args.part](args.slug)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
