"""The load test's simulated annotators (``bench.load_clients``): when their first clicks leave. At a
pace (``think_ms``) independent people do not click at the same instant, so each annotator's first
click waits a random part of one pause; the saturation run (no pauses) keeps the burst of all first
clicks at once. The connection and the clock are stand-ins: nothing is sent and nothing waits."""
import threading

import pytest

from bench import load_clients
from bench.load_clients import Annotator


class _Answer:
    status = 200

    def read(self) -> bytes:
        return b'<span class="saved">Saved \xe2\x9c\x93</span><input type="hidden" name="revision" value="1">'


class _Connection:
    """Records, in order, every request and every pause of its annotator."""

    def __init__(self, events: list):
        self.events = events

    def request(self, method, path, body=None, headers=None):
        self.events.append(("request", method, path))

    def getresponse(self):
        return _Answer()

    def close(self):
        pass


def _first_moves(monkeypatch, *, think_ms: int, annotators: int = 6) -> list[list[tuple]]:
    """For each annotator: what it did after its warm-up page, up to its first save."""
    timelines = [[] for _ in range(annotators)]
    local = threading.local()
    monkeypatch.setattr(Annotator, "connect", lambda self: setattr(self, "conn", _Connection(timelines[self.index])))
    real_sleep = load_clients.time.sleep

    def sleep(seconds):  # an annotator's pause is recorded; any other thread's sleeps as before
        events = getattr(local, "events", None)
        if events is None:
            return real_sleep(seconds)
        events.append(("pause", seconds))

    monkeypatch.setattr(load_clients.time, "sleep", sleep)
    barrier = threading.Barrier(annotators)
    load = []
    for i in range(annotators):
        client = {"work": [{"assignment": 10 + i, "criteria": [1, 2]}], "session": "s", "csrf": "c"}
        annotator = Annotator(port=1, client=client, think_ms=think_ms, deadline=float("inf"), start=barrier, seed_value=i)
        annotator.index = i
        load.append(annotator)

    def run(annotator):
        local.events = timelines[annotator.index]
        Annotator.run(annotator)

    threads = [threading.Thread(target=run, args=(a,)) for a in load]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert all(not a.errors for a in load), [a.errors for a in load]
    firsts = []
    for events in timelines:
        assert events[0] == ("request", "GET", events[0][2])  # the warm-up page
        saves = [n for n, e in enumerate(events) if e[0] == "request" and e[1] == "POST"]
        firsts.append(events[1:saves[0] + 1])
    return firsts


def test_at_a_pace_each_first_click_waits_a_random_part_of_one_pause(monkeypatch):
    firsts = _first_moves(monkeypatch, think_ms=1000)
    waits = []
    for moves in firsts:
        assert [m[0] for m in moves] == ["pause", "request"]
        waits.append(moves[0][1])
    assert all(0 <= w < 1.0 for w in waits)
    assert len(set(waits)) == len(waits)  # not one moment for all


def test_without_pauses_every_first_click_leaves_at_once(monkeypatch):
    firsts = _first_moves(monkeypatch, think_ms=0)
    assert all([m[0] for m in moves] == ["request"] for moves in firsts)


@pytest.mark.parametrize("think_ms", [500, 1000])
def test_the_first_wait_scales_with_the_pace(monkeypatch, think_ms):
    waits = [moves[0][1] for moves in _first_moves(monkeypatch, think_ms=think_ms, annotators=4)]
    assert max(waits) < think_ms / 1000 and min(waits) >= 0
