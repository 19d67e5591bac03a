"""Fixtures for judge tests: the loopback Chat Completions server and judges of the mini project."""
import pytest

from tests.grading.judges.chat_server import ChatServer


@pytest.fixture
def chat_server():
    server = ChatServer().start()
    yield server
    server.stop()


@pytest.fixture
def make_judge(mini_project, chat_server):
    from grading.models import Judge

    def make(name="llm", **fields):
        values = dict(backend=Judge.OPENAI, model="judge-model", base_url=chat_server.url, concurrency=4,
                      max_retries=2, condition=Judge.ANONYMIZED)
        values.update(fields)
        return Judge.objects.create(project=mini_project, name=name, **values)

    return make


@pytest.fixture
def run_judge():
    """Create a run of a judge and execute it here (synchronously); returns (run, summary)."""
    from grading.judges.runner import judge_run_execute
    from grading.judges.services import judge_run_create

    sleeps: list[float] = []

    def run(judge, *, scope=None, on_flush=None):
        run = judge_run_create(judge=judge, scope=scope)
        summary = judge_run_execute(run=run, sleep=sleeps.append, on_flush=on_flush)
        run.refresh_from_db()
        return run, summary

    run.sleeps = sleeps
    return run
