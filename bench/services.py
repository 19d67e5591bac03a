"""What the benches need from this machine's services, in one place: a throw-away PostgreSQL
database, whether Redis answers, and the tests' loopback Chat Completions server run in a process
of its own (so its threads never compete with the bench's for the interpreter lock)."""
import json
import multiprocessing
import os

PG_ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def _admin():
    import psycopg  # lazy: a bench without PostgreSQL never needs the driver

    return psycopg.connect(PG_ADMIN_URL.replace("postgres://", "postgresql://"), autocommit=True, connect_timeout=3)


def fresh_database(name: str) -> str | None:
    """The URL of database ``name``, dropped and created again; None when no server answers."""
    try:
        with _admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception:  # noqa: BLE001 - any failure means: no PostgreSQL to bench on
        return None
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def drop_database(name: str) -> None:
    """Drop the bench database ``name`` (disk is shared)."""
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_up(url: str = REDIS_URL) -> bool:
    import redis  # lazy: as above

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _serve(conn, latency: float) -> None:
    """Child process: run the server; answer "stats" with its counters and the arrival times of the
    requests since the last "stats" (monotonic seconds of this process), until "stop"."""
    from tests.grading.judges.chat_server import ChatServer

    server = ChatServer(latency=latency).start()
    conn.send(server.url)
    seen = 0
    while conn.recv() != "stop":
        with server.lock:
            requests = list(server.requests)
            times = server.times[seen:]
            seen = len(server.times)
        prompts = {json.dumps(r.get("messages"), sort_keys=True) for r in requests}
        conn.send({"requests": len(requests), "max_in_flight": server.max_in_flight,
                   "repeated": len(requests) - len(prompts),  # requests of a prompt already asked
                   "times": times})
    server.stop()


class ChatServerProcess:
    """The loopback chat server answering each call after ``latency`` seconds, in its own process."""

    def __init__(self, latency: float):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, latency), daemon=True)
        self.process.start()
        self.url = self.conn.recv()

    def stats(self) -> dict:
        """Requests, most in flight, repeated prompts, and ``times``: arrivals since the last call."""
        self.conn.send("stats")
        return self.conn.recv()

    def times(self) -> list[float]:
        return self.stats()["times"]

    def stop(self) -> None:
        self.conn.send("stop")
        self.process.join(timeout=10)
