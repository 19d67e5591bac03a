"""Load test of label saving: N concurrent annotators clicking through their rubrics against
gunicorn + PostgreSQL on this machine, then a check that the database holds every acknowledged
save exactly once (issue 4, point 7).

    .venv/bin/python -m bench.load_labels [--annotators 50] [--items 2] [--criteria 30]
        [--think-ms 1000] [--workers 3] [--threads 2] [--max-seconds 120] [--json]

What it does, all on loopback (it refuses any other host):
1. creates a throw-away PostgreSQL database (default ``evalsite_load_<pid>`` on
   postgres://postgres@127.0.0.1:5432), migrates it, collects static files (into the
   git-ignored ``staticfiles/``), and seeds one blind project: ``items``
   responses per annotator, each with ``criteria`` binary criteria, one cohort of
   ``annotators`` annotators, overlap 1, and a logged-in session per annotator;
2. starts gunicorn (production settings, gthread workers) on a free 127.0.0.1 port;
3. runs one thread per annotator; each loads its labeling page once (warm-up, not measured),
   then, all starting together, posts the labeling page's real htmx save request for
   every criterion of its items (every fifth criterion is changed a second time, with the
   revision the first save returned), optionally pausing ``think-ms`` between clicks;
4. stops gunicorn and checks the database: one label per acknowledged (response, criterion,
   annotator), holding the last acknowledged verdict and revision, one history row per
   acknowledged change, no duplicates; then drops the database.

It is bounded: at most annotators × items × criteria × 1.2 requests and ``max-seconds`` of
load. Figures: p50 / p95 / max save latency (client-side, ms), saves per second, lost and
duplicated labels. ``run_all`` gives ``make bench`` the same figures.

Which click rate: an annotator reads a criterion before deciding it, so the target scenario
is each of the 50 annotators clicking about once a second (``--think-ms 1000``, uniformly
0.5-1.5 s between clicks), faster than any physician reads a rubric: 50 saves/s in all.
Twice that rate is run too, for headroom. ``--think-ms 0`` (no pauses at all) is a saturation
test: with 50 clients always waiting, latency is 50 / throughput by Little's law, so it
measures how many saves per second the machine sustains, not what an annotator waits.
Before the save path was written in plain SQL (``annotation.labels``) one save cost about
13 ms of Python in ORM query building; see the issue notes for the figures before and after.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
VERDICTS = ("met", "not_met", "cannot_assess")
REVISION = re.compile(r'name="revision" value="(\d+)"')


def _loopback_only(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK:
        raise SystemExit(f"load_labels runs against loopback only, not {host!r}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * pct / 100
    low, high = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def _cpu_pressure_total() -> int | None:
    """Microseconds some task waited for a CPU (Linux PSI), to show how contended the run was."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        return int(first.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def _cpu_pressure_since(before: int | None, seconds: float) -> str | None:
    after = _cpu_pressure_total()
    if before is None or after is None or not seconds:
        return None
    return f"{100 * (after - before) / 1e6 / seconds:.0f}% of the time some task waited for a CPU"


class BenchDatabase:
    """A PostgreSQL database that exists only for the duration of the run."""

    def __init__(self, name: str):
        _loopback_only(ADMIN_URL)
        self.name = name
        self.url = ADMIN_URL.rsplit("/", 1)[0] + "/" + name

    def __enter__(self):
        import psycopg

        with psycopg.connect(ADMIN_URL.replace("postgres://", "postgresql://"), autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.name}"')
        return self

    def __exit__(self, *exc):
        import psycopg

        with psycopg.connect(ADMIN_URL.replace("postgres://", "postgresql://"), autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def _environment(database_url: str) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "evalsite.settings.production",
        "SECRET_KEY": os.environ.get("BENCH_SECRET_KEY", secrets.token_urlsafe(40)),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "ERROR",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback: no TLS proxy in front here
    }


def seed(*, annotators: int, items: int, criteria: int) -> list[dict]:
    """One blind project and, per annotator, a session, a CSRF secret and its (assignment, criteria)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from annotation.assignments import assignments_create
    from annotation.models import Assignment, Case, Cohort, CohortMembership, Project, Response
    from annotation.rubrics import rubrics_freeze
    from annotation.selectors import criteria_for_response

    project = Project.objects.create(slug="load", name="Load test", blind=True, overlap=1)
    n_responses = annotators * items
    n_cases = max(1, n_responses // 10)
    cases = Case.objects.bulk_create(
        Case(project=project, external_id=f"case-{i}", position=i, prompt=f"Case {i}") for i in range(n_cases)
    )
    rubrics_freeze(project=project, scopes=[
        (case, [{"criterion_id": f"case-{i}-c{j}", "text": f"Criterion {j}"} for j in range(criteria)])
        for i, case in enumerate(cases)
    ])
    Response.objects.bulk_create(
        Response(project=project, case=cases[i % n_cases], external_id=f"r{i}", position=i, model="model-x",
                 text="Call emergency services now. An ECG is needed.")
        for i in range(n_responses)
    )
    cohort = Cohort.objects.create(project=project, name="cohort")
    User = get_user_model()
    users = User.objects.bulk_create(User(username=f"load{i:03d}") for i in range(annotators))
    CohortMembership.objects.bulk_create(
        CohortMembership(project=project, cohort=cohort, user=user, role="annotator") for user in users
    )
    assignments_create(cohort=cohort)
    clients = []
    for user in User.objects.filter(username__startswith="load").order_by("username"):
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        work = [
            {"assignment": a.pk, "criteria": [c.pk for c in criteria_for_response(response=a.response)]}
            for a in Assignment.objects.filter(annotator=user).select_related("response").order_by("position")
        ]
        token = Token.objects.create(user=user).key  # for the API mode
        clients.append({"user_id": user.pk, "session": session.session_key, "csrf": secrets.token_hex(16), "work": work,
                        "token": token})
    return clients


class Annotator(threading.Thread):
    """One simulated annotator: a keep-alive connection and the real htmx save requests."""

    def __init__(self, *, port: int, client: dict, think_ms: int, deadline: float, start: threading.Barrier, seed_value: int,
                 batch: bool = False, api: bool = False, schedule: list[float] | None = None, clock: dict | None = None):
        super().__init__(daemon=True)
        self.batch, self.api = batch, api
        # paced batches: when each item is due, in seconds after the common start (``clock["t0"]``)
        self.schedule, self.clock = schedule, clock
        self.port, self.client, self.think_ms, self.deadline, self.start_barrier = port, client, think_ms, deadline, start
        self.rng = random.Random(seed_value)
        self.latencies_ms: list[float] = []
        self.acknowledged: dict[tuple[int, int], tuple[str, int]] = {}  # (assignment, criterion) -> (verdict, revision)
        self.changes = 0
        self.reconnects = 0
        self.errors: list[str] = []
        self.headers = {
            "Cookie": f"sessionid={client['session']}; csrftoken={client['csrf']}",
            "X-CSRFToken": client["csrf"],
            "HX-Request": "true",
            "Content-Type": "application/x-www-form-urlencoded",
        }

    def connect(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def post(self, path: str, body: str, headers: dict, what: str, due: float | None = None) -> tuple[int, str] | None:
        """One POST, timed; a dropped keep-alive connection is reopened and the request sent
        again, as a browser would (the server treats a repeated save as a no-op). A paced request
        is timed from when it was due (``due``, perf_counter seconds), not from when this client got
        round to sending it: a client held up by a slow answer would otherwise hide the delay it
        caused (coordinated omission)."""
        started = time.perf_counter() if due is None else min(due, time.perf_counter())
        for _attempt in range(3):
            try:
                self.conn.request("POST", path, body=body, headers=headers)
                response = self.conn.getresponse()
                text = response.read().decode()
                break
            except (ConnectionError, http.client.HTTPException):
                self.reconnects += 1
                self.conn.close()
                self.connect()
        else:
            self.errors.append(f"no answer for {what}")
            return None
        self.latencies_ms.append((time.perf_counter() - started) * 1000)
        return response.status, text

    def save(self, assignment: int, criterion: int, verdict: str, revision: int) -> int | None:
        """One save as the page sends it (or, with ``api``, as a pipeline does: POST /api/labels/
        with the annotator's token and the revision it read)."""
        if self.api:
            body = json.dumps({"assignment": assignment, "criterion": criterion, "verdict": verdict, "revision": revision})
            answer = self.post("/api/labels/", body, {"Authorization": f"Token {self.client['token']}",
                                                      "Content-Type": "application/json"}, f"{assignment}/{criterion}")
            if answer is not None and answer[0] != 200:
                self.errors.append(f"{answer[0]} {assignment}/{criterion}: {answer[1][:200]!r}")
            return int(json.loads(answer[1])["revision"]) if answer is not None and answer[0] == 200 else None
        answer = self.post(f"/work/{assignment}/criteria/{criterion}/", urlencode({"verdict": verdict, "revision": revision}),
                           self.headers, f"{assignment}/{criterion}")
        if answer is None:
            return None
        status, text = answer
        found = REVISION.search(text)
        if status != 200 or "Saved ✓" not in text or 'class="error"' in text or not found:
            self.errors.append(f"{status} {assignment}/{criterion}: {text[:200]!r}")
            return None
        return int(found.group(1))

    def save_item(self, assignment: int, criteria: list[int], due: float | None = None) -> None:
        """A whole item in one request to the batch API (issue 12, point 7), as a team importing
        finished labels, or the page's batched clicks, would send it."""
        decisions = [{"criterion": c, "verdict": self.rng.choice(VERDICTS), "revision": 0} for c in criteria]
        answer = self.post(f"/api/assignments/{assignment}/labels/", json.dumps(decisions),
                           {**self.headers, "Content-Type": "application/json"}, f"item {assignment}", due=due)
        if answer is None:
            return
        status, text = answer
        if status != 200:
            self.errors.append(f"{status} item {assignment}: {text[:200]!r}")
            return
        verdicts = {d["criterion"]: d["verdict"] for d in decisions}
        for label in json.loads(text):
            self.acknowledged[(assignment, label["criterion"])] = (verdicts[label["criterion"]], label["revision"])
            self.changes += 1

    def run(self):
        self.connect()
        try:  # warm-up, not measured: the labeling page (also proves the session works)
            self.conn.request("GET", f"/work/{self.client['work'][0]['assignment']}/", headers=self.headers)
            page = self.conn.getresponse()
            page.read()
            if page.status != 200:
                self.errors.append(f"warm-up GET answered {page.status}")
        finally:
            self.start_barrier.wait()
        try:
            for index, item in enumerate(self.client["work"]):
                if self.batch:
                    if time.monotonic() > self.deadline:
                        return
                    due = None
                    if self.schedule is not None:
                        due = self.clock["t0"] + self.schedule[index]
                        time.sleep(max(0.0, due - time.perf_counter()))  # pacing: wait for the item's turn
                    self.save_item(item["assignment"], item["criteria"], due=due)
                    continue
                for index, criterion in enumerate(item["criteria"]):
                    plan = [self.rng.choice(VERDICTS)]
                    if index % 5 == 0:
                        plan.append(next(v for v in VERDICTS if v != plan[0]))
                    revision = 0
                    for verdict in plan:
                        if time.monotonic() > self.deadline:
                            return
                        new_revision = self.save(item["assignment"], criterion, verdict, revision)
                        if new_revision is not None:
                            self.acknowledged[(item["assignment"], criterion)] = (verdict, new_revision)
                            self.changes += 1
                            revision = new_revision
                        if self.think_ms:
                            time.sleep(self.rng.uniform(0.5, 1.5) * self.think_ms / 1000)
        except Exception as exc:  # noqa: BLE001 - reported as an error of this annotator
            self.errors.append(repr(exc))
        finally:
            self.conn.close()


def verify(annotators: list[Annotator], assignment_response: dict[int, int]) -> dict:
    """Compare what the server acknowledged with what the database holds."""
    from django.db.models import Count

    from annotation.models import Label, LabelHistory

    stored = {
        (row["assignment_id"], row["criterion_id"]): row
        for row in Label.objects.values("assignment_id", "criterion_id", "verdict", "revision", "annotator_id")
    }
    duplicated = (
        Label.objects.values("response_id", "criterion_id", "annotator_id").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    lost = wrong = 0
    expected_changes = 0
    for annotator in annotators:
        expected_changes += annotator.changes
        for key, (verdict, revision) in annotator.acknowledged.items():
            row = stored.get(key)
            if row is None:
                lost += 1
            elif (row["verdict"], row["revision"], row["annotator_id"]) != (verdict, revision, annotator.client["user_id"]):
                wrong += 1
    acknowledged = sum(len(a.acknowledged) for a in annotators)
    return {
        "labels_acknowledged": acknowledged,
        "labels_in_db": len(stored),
        "lost": lost,
        "wrong_value": wrong,
        "unexpected_extra": len(stored) - acknowledged + lost,
        "duplicated": duplicated,
        "history_rows": LabelHistory.objects.count(),
        "history_expected": expected_changes,
    }


def paced_schedule(*, annotators: int, items: int, criteria: int, rate: float) -> list[list[float]]:
    """When each annotator's items are due (seconds after the start) for ``rate`` decisions per
    second in all: items leave evenly spaced, the annotators taking turns (annotator i's k-th item
    is the (k x annotators + i)-th of the run), so the server sees a steady arrival rate whatever
    its answers' latency (an open-loop load: latency is measured at a given throughput)."""
    gap = criteria / rate
    return [[(k * annotators + i) * gap for k in range(items)] for i in range(annotators)]


def run(*, annotators=50, items=2, criteria=30, think_ms=1000, workers=3, threads=2, max_seconds=120.0,
        db_name=None, conn_max_age=60, batch=False, api=False, rate=0.0) -> dict:
    db_name = db_name or f"evalsite_load_{os.getpid()}"
    with BenchDatabase(db_name) as database:
        url = database.url + (f"?conn_max_age={conn_max_age}" if conn_max_age else "")
        env = _environment(url)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        # production settings serve hashed static files: collect them as a deployment would
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "ALLOWED_HOSTS")})
        import django

        django.setup()
        from django.db import connections

        clients = seed(annotators=annotators, items=items, criteria=criteria)
        connections.close_all()
        port = _free_port()
        gunicorn = [
            str(Path(sys.executable).with_name("gunicorn")), "evalsite.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread",
            "--log-level", "warning", "--timeout", "60",
            # keep idle connections open across an annotator's pauses, as a fronting proxy would
            "--keep-alive", "75",
        ]
        server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
        try:
            ready_by = time.monotonic() + 30
            while True:
                try:
                    probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    probe.request("GET", "/accounts/login/")
                    if probe.getresponse().status == 200:
                        break
                except OSError:
                    pass
                if time.monotonic() > ready_by or server.poll() is not None:
                    raise SystemExit("gunicorn did not come up")
                time.sleep(0.2)
            load_before = round(os.getloadavg()[0], 2)  # the machine is shared: say how busy it was
            pressure_before = _cpu_pressure_total()
            clock: dict = {}
            barrier = threading.Barrier(len(clients) + 1, action=lambda: clock.setdefault("t0", time.perf_counter()))
            deadline = time.monotonic() + max_seconds
            schedules = (paced_schedule(annotators=len(clients), items=items, criteria=criteria, rate=rate) if rate
                         else [None] * len(clients))
            load = [Annotator(port=port, client=c, think_ms=think_ms, deadline=deadline, start=barrier, seed_value=i,
                              batch=batch, api=api, schedule=schedules[i], clock=clock) for i, c in enumerate(clients)]
            for annotator in load:
                annotator.start()
            barrier.wait()
            started = time.perf_counter()
            for annotator in load:
                annotator.join(timeout=max_seconds + 60)
            elapsed = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
        latencies = [ms for a in load for ms in a.latencies_ms]
        # Every annotator's first click leaves at the same instant (the start barrier): that
        # burst is shown apart from the clicks after it, which arrive at the annotators' pace.
        first = [a.latencies_ms[0] for a in load if a.latencies_ms]
        after_first = [ms for a in load for ms in a.latencies_ms[1:]]
        figures = {
            "annotators": annotators, "items_per_annotator": items, "criteria": criteria, "think_ms": think_ms,
            "gunicorn": f"{workers} gthread workers x {threads} threads", "conn_max_age": conn_max_age,
            "mode": (f"batch API, one request per item, paced at {rate:g} decisions/s" if batch and rate
                     else "batch API, one request per item" if batch else "POST /api/labels/ with a token, one request per decision"
                     if api else "one request per click"),
            "requests": len(latencies), "seconds": round(elapsed, 2),
            "decisions_per_second": round(sum(a.changes for a in load) / elapsed, 1) if elapsed else None,
            "saves_per_second": round(len(latencies) / elapsed, 1) if elapsed else None,
            "p50_ms": round(_percentile(latencies, 50), 1), "p95_ms": round(_percentile(latencies, 95), 1),
            "p99_ms": round(_percentile(latencies, 99), 1), "max_ms": round(max(latencies), 1) if latencies else None,
            "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
            "first_clicks_p50_ms": round(_percentile(first, 50), 1),
            "first_clicks_max_ms": round(max(first), 1) if first else None,
            "after_first_p95_ms": round(_percentile(after_first, 95), 1),
            "after_first_p99_ms": round(_percentile(after_first, 99), 1),
            "after_first_max_ms": round(max(after_first), 1) if after_first else None,
            "errors": sum(len(a.errors) for a in load),
            "reconnects": sum(a.reconnects for a in load),
            "first_errors": [e for a in load for e in a.errors][:3],
            "cpus": os.cpu_count(),
            "loadavg_1min_before": load_before,
            "cpu_pressure_during": _cpu_pressure_since(pressure_before, elapsed),
        }
        figures.update(verify(load, {}))
        connections.close_all()
    return figures


def run_all(out_dir) -> list[tuple[str, object, str]]:
    """For ``make bench``: the target pace, twice that, and saturation, each in its own process."""
    rows = []
    for label, extra in (("1 click/s each", ["--think-ms", "1000"]), ("2 clicks/s each", ["--think-ms", "500"]),
                         ("no pauses, saturation", ["--think-ms", "0"]),
                         ("batch", ["--think-ms", "0", "--batch", "--items", "20", "--max-seconds", "300"]),
                         ("API, 60 s", ["--think-ms", "0", "--api", "--items", "20", "--max-seconds", "60"])):
        proc = subprocess.run([sys.executable, "-m", "bench.load_labels", "--json", *extra], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            rows.append((f"[load_labels {label}]", "FAILED: " + (proc.stderr.strip().splitlines() or ["?"])[-1], ""))
            continue
        f = json.loads(proc.stdout.strip().splitlines()[-1])
        if "--api" in extra:
            rows += [("[load_labels API] 50 annotators, POST /api/labels/, no pauses", f["seconds"],
                      f"s, {f['saves_per_second']} saves/s, p50 / p95 / p99 {f['p50_ms']} / {f['p95_ms']} / {f['p99_ms']} ms"),
                     ("[load_labels API] lost / duplicated / wrong / errors", f"{f['lost']} / {f['duplicated']} / "
                      f"{f['wrong_value']} / {f['errors']}", f"(labels in the database {f['labels_in_db']} of "
                      f"{f['labels_acknowledged']} acknowledged; history rows {f['history_rows']} of {f['history_expected']})")]
            continue
        if "--batch" in extra:
            rows += [
                (f"[load_labels batch] {f['requests']} items x {f['criteria']} decisions, 50 clients, no pauses",
                 f["seconds"], f"s wall, {f['decisions_per_second']} decisions/s (Label Studio 1.23.2 here: about 85 s, "
                               "345 decisions/s, p95 5.6 s, 2% failed)"),
                ("[load_labels batch] per request p50 / p95", f"{f['p50_ms']} / {f['p95_ms']}", "ms"),
                ("[load_labels batch] lost / duplicated / errors", f"{f['lost']} / {f['duplicated']} / {f['errors']}",
                 f"(labels in the database {f['labels_in_db']} of {f['labels_acknowledged']} acknowledged)"),
            ]
            continue
        rows += [
            (f"[load_labels {label}] 50 annotators save p50 / p95", f"{f['p50_ms']} / {f['p95_ms']}",
             "ms (target p95 <= 20 at 1 click/s, issue 12)" if extra[1] == "1000" else "ms"),
            (f"[load_labels {label}] p99 / max", f"{f['p99_ms']} / {f['max_ms']}",
             f"ms (the 50 simultaneous first clicks: p50 {f['first_clicks_p50_ms']}, max {f['first_clicks_max_ms']}; "
             f"after them p99 {f['after_first_p99_ms']}, max {f['after_first_max_ms']})"),
            (f"[load_labels {label}] throughput", f["saves_per_second"], "saves/s"),
            (f"[load_labels {label}] lost / duplicated / errors", f"{f['lost']} / {f['duplicated']} / {f['errors']}", ""),
        ]
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=2, help="responses per annotator")
    parser.add_argument("--criteria", type=int, default=30)
    parser.add_argument("--think-ms", type=int, default=1000, help="mean pause between two clicks of one annotator (0: none)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (3 on 2 cores measured best)")
    parser.add_argument("--threads", type=int, default=2, help="threads per gunicorn worker")
    parser.add_argument("--conn-max-age", type=int, default=60, help="persistent DB connections (0 = one per request)")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--db-name", default=None)
    parser.add_argument("--batch", action="store_true", help="each item's decisions in one batch API request")
    parser.add_argument("--api", action="store_true", help="each decision through POST /api/labels/ with a token")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="with --batch: send items at this many decisions per second in all, evenly spaced, and time "
                             "each from when it was due (0: every client sends its next item as soon as the last is answered)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.rate and not args.batch:
        raise SystemExit("--rate paces batches: give --batch too")
    if not (1 <= args.annotators <= 200 and 1 <= args.items <= 20 and 1 <= args.criteria <= 100 and args.max_seconds <= 600):
        raise SystemExit("bounded: annotators 1..200, items 1..20, criteria 1..100, max-seconds <= 600")
    figures = run(annotators=args.annotators, items=args.items, criteria=args.criteria, think_ms=args.think_ms,
                  workers=args.workers, threads=args.threads, max_seconds=args.max_seconds, db_name=args.db_name,
                  conn_max_age=args.conn_max_age, batch=args.batch, api=args.api, rate=args.rate)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:<22} {value}")
    ok = figures["lost"] == 0 and figures["duplicated"] == 0 and figures["wrong_value"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
