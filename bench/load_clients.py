"""The simulated annotators of the label-saving load test (``bench.load_labels``): each a thread with a
keep-alive connection posting the labeling page's real save requests (or the API's), optionally paced,
and the check that the database holds every acknowledged save exactly once."""
from __future__ import annotations

import http.client
import json
import random
import re
import threading
import time
from urllib.parse import urlencode

VERDICTS = ("met", "not_met", "cannot_assess")
REVISION = re.compile(r'name="revision" value="(\d+)"')


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
        if self.think_ms and not self.batch:
            # Independent people do not click at the same instant: each annotator's first click comes
            # at a random moment of its first pause, as each later one does. (Without pauses the
            # 50 first clicks leave together: the saturation run keeps that burst.)
            time.sleep(self.rng.uniform(0.0, 1.0) * self.think_ms / 1000)
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


def verify(annotators: list[Annotator]) -> dict:
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
