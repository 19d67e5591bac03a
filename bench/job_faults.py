"""A Celery worker killed mid-export and mid-import: ``python -m bench.job_faults [--lease 6]``.

On PostgreSQL and the Redis broker (skipped, saying so, when either is missing), with real worker
processes (solo pool: the job runs in the worker's own process, so a SIGKILL kills it):

1. mid-export: the 250-case benchmark project is imported; its gold export is queued as the site
   queues it (the copy that runs it and a watcher copy, ``grading.jobs.data_job_dispatch``); once
   the job has written a fifth of its progress the worker is SIGKILLed and a second worker
   started. Measured from the kill: when the job is finished by the second worker, its attempts,
   whether every file of the zip matches the manifest's sha256, and what is left in the job's
   directory besides the zip (the dead attempt's half-written files must be gone).
2. mid-import: the same bundle under another slug is uploaded as an import job; the worker is
   SIGKILLed while the import's transaction is open. Right after the kill: the project, its
   cases, responses and labels must not exist (nothing half-written); then a second worker
   finishes the import and the row counts must equal the bundle's.

``run_all`` gives ``make bench`` the figures. The lease (``EVALSITE_JOB_LEASE_SECONDS``) is
shortened to ``--lease`` so the take-over comes within seconds: between one lease after the
kill's last heartbeat and the watcher's countdown (a lease plus five seconds after queuing).
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from bench.services import PG_ADMIN_URL, REDIS_URL, fresh_database, redis_up

ROOT = Path(__file__).resolve().parent.parent
DB = "evalsite_bench_jobfaults"


def _zip_verifies(path: Path) -> bool:
    """Every file of the export zip has the sha256 its manifest lists."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        prefix = names[0].split("/", 1)[0] + "/"
        manifest = json.loads(archive.read(prefix + "manifest.json"))
        return all(hashlib.sha256(archive.read(prefix + name)).hexdigest() == digest
                   for name, digest in manifest["files"].items())


def _kill(process: subprocess.Popen) -> float:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    return time.monotonic()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lease", type=float, default=6.0)
    args = parser.parse_args(argv)
    database = fresh_database(DB)
    if database is None or not redis_up():
        result = {"skipped": "needs PostgreSQL at " + PG_ADMIN_URL.rsplit("/", 1)[0] + " and Redis at " + REDIS_URL}
        print(json.dumps(result))
        return result
    jobs_dir = Path(tempfile.mkdtemp(prefix="evalsite-jobfaults-"))
    env = {**os.environ, "DATABASE_URL": database, "CELERY_BROKER_URL": REDIS_URL, "CELERY_RESULT_BACKEND": REDIS_URL,
           "DJANGO_SETTINGS_MODULE": "evalsite.settings.local", "DEBUG": "false", "CELERY_TASK_ALWAYS_EAGER": "false",
           "EVALSITE_JOB_LEASE_SECONDS": str(args.lease), "EVALSITE_JOBS_DIR": str(jobs_dir)}
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Case, Label, Project, Response
    from bench.run import bench_bundle
    from grading.bundles import bundle_import
    from grading.jobs import data_job_dispatch
    from grading.jobs import jobs_dir as job_directory
    from grading.models import DataJob, Judgment
    from tests.celery_workers import SoloWorkers, wait_for

    call_command("migrate", verbosity=0, interactive=False)
    bundle = bench_bundle(250)
    bundle_import(path=bundle)
    project = Project.objects.get(slug=json.loads((bundle / "project.json").read_text())["slug"])
    workers = SoloWorkers(env=env, broker=REDIS_URL, backend=REDIS_URL, prefix="bench-jobfaults", log=subprocess.DEVNULL)

    def send(**options):
        return workers.client.send_task("grading.data_job_run", queue=workers.queue, **options)

    result = {"lease_s": args.lease}
    try:
        # 1. mid-export
        job = DataJob.objects.create(kind=DataJob.EXPORT, project=project, stage="queued")
        first = workers.start("export-first")
        data_job_dispatch(job_id=job.pk, send=send)
        wait_for(lambda: DataJob.objects.filter(pk=job.pk, status=DataJob.RUNNING, progress_pct__gte=20).exists(), 120,
                 "a fifth of the export")
        killed = _kill(first)
        at_kill = DataJob.objects.get(pk=job.pk)
        left_at_kill = sorted(p.name for p in job_directory(job).iterdir())
        second = workers.start("export-second")
        job = wait_for(lambda: DataJob.objects.filter(pk=job.pk, status__in=[DataJob.FINISHED, DataJob.FAILED]).first(),
                       300, "the end of the export")
        done_s = time.monotonic() - killed
        second.terminate()  # the import below must run on the worker that is killed, not on this one
        second.wait(timeout=30)
        files = sorted(p.name for p in job_directory(job).iterdir())
        result["export"] = {
            "progress_at_kill_pct": at_kill.progress_pct, "files_at_kill": left_at_kill, "status": job.status,
            "error": job.error, "attempts": job.attempts, "finished_after_kill_s": round(done_s, 2),
            "zip_verifies": job.status == DataJob.FINISHED and _zip_verifies(job_directory(job) / files[0]),
            "left_in_job_dir": files, "decisions": (job.result or {}).get("counts", {}).get("gold.jsonl"),
        }

        # 2. mid-import: the same bundle as another project, uploaded
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "bundle"
            shutil.copytree(bundle, copy)
            spec = json.loads((copy / "project.json").read_text())
            spec["slug"] = "bench-import-fault"
            (copy / "project.json").write_text(json.dumps(spec))
            job = DataJob.objects.create(kind=DataJob.IMPORT, stage="queued", params={"update_settings": False})
            target = job_directory(job) / "upload.zip"
            with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
                for path in sorted(copy.iterdir()):
                    archive.write(path, path.name)
        DataJob.objects.filter(pk=job.pk).update(file=f"{job.pk}/upload.zip")
        expected = {"cases": Case.objects.filter(project=project).count(),
                    "responses": Response.objects.filter(project=project).count(),
                    "labels": Label.objects.filter(project=project).count(),
                    "judgments": Judgment.objects.filter(judge__project=project).count()}
        first = workers.start("import-first")
        data_job_dispatch(job_id=job.pk, send=send)
        wait_for(lambda: DataJob.objects.filter(pk=job.pk, status=DataJob.RUNNING, stage="importing").exists(), 120,
                 "the import to start")
        time.sleep(1.0)  # inside the import's transaction (about 2.5 s for this bundle here)
        killed = _kill(first)

        def counts() -> dict:
            imported = Project.objects.filter(slug="bench-import-fault").first()
            if imported is None:
                return {"project": 0, "cases": 0, "responses": 0, "labels": 0, "judgments": 0}
            return {"project": 1, "cases": Case.objects.filter(project=imported).count(),
                    "responses": Response.objects.filter(project=imported).count(),
                    "labels": Label.objects.filter(project=imported).count(),
                    "judgments": Judgment.objects.filter(judge__project=imported).count()}

        after_kill = counts()
        at_kill = DataJob.objects.get(pk=job.pk)
        workers.start("import-second")
        job = wait_for(lambda: DataJob.objects.filter(pk=job.pk, status__in=[DataJob.FINISHED, DataJob.FAILED]).first(),
                       300, "the end of the import")
        done_s = time.monotonic() - killed
        final = counts()
        result["import"] = {
            "rows_right_after_kill": after_kill, "status_at_kill": at_kill.status, "attempts_at_kill": at_kill.attempts,
            "status": job.status, "error": job.error, "attempts": job.attempts,
            "finished_after_kill_s": round(done_s, 2), "rows_after": final,
            "rows_as_the_bundle": {k: final[k] == v for k, v in expected.items()} == dict.fromkeys(expected, True),
        }
        result["load_average_1m"] = round(os.getloadavg()[0], 2)
    finally:
        workers.stop()
        connection.close()
        shutil.rmtree(jobs_dir, ignore_errors=True)
    print(json.dumps(result))
    return result


def run_all(out_dir) -> list[tuple[str, object, str]]:
    """For ``make bench``: both faults, in a process of their own."""
    proc = subprocess.run([sys.executable, "-m", "bench.job_faults"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        return [("[job faults]", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1], "")]
    f = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skipped" in f:
        return [("[job faults]", "skipped", f["skipped"])]
    e, i = f["export"], f["import"]
    return [
        ("[job faults] worker killed mid-export", e["status"],
         f"at {e['progress_at_kill_pct']}%, finished {e['finished_after_kill_s']} s after the kill (lease {f['lease_s']} s), "
         f"attempts {e['attempts']}, zip verifies: {e['zip_verifies']}, left in the job directory: {e['left_in_job_dir']}"),
        ("[job faults] worker killed mid-import", i["status"],
         f"rows right after the kill {i['rows_right_after_kill']}, finished {i['finished_after_kill_s']} s after it, "
         f"attempts {i['attempts']}, rows as the bundle: {i['rows_as_the_bundle']}"),
    ]


if __name__ == "__main__":
    main()
