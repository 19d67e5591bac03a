"""A real HTTP server on loopback that speaks the Chat Completions protocol, for judge tests
and ``bench/judge_calls.py``. Each request is answered by a script — a function of the
request body and its index — so a test can return valid answers, fenced or bare JSON,
garbage, errors with Retry-After, or stall past the client's timeout. The server records
every request, when it arrived (``times``, monotonic seconds) and the largest number it was
serving at once.
"""
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Reply:
    content: str | None = None  # the assistant message
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float | None = None  # seconds before answering (None: the server's latency)
    usage: tuple[int, int] = (10, 5)
    error: str = "server error"


def answer(obj: dict) -> Reply:
    return Reply(content=json.dumps(obj))


def default_script(body: dict, index: int) -> Reply:
    """Met for binary items; the first listed option for the others."""
    user = body["messages"][-1]["content"]
    if "<options>" in user:
        first = user.split("<options>\n", 1)[1].split("\n", 1)[0].removeprefix("- ")
        return answer({"explanation": "first option", "option": first})
    return answer({"explanation": "looks fine", "criteria_met": True})


LATE = 0.4  # seconds a recorded time may lag the moment it stands for on a loaded 2-core machine


def assert_paced(times: list[float], spacing: float, *, late: float = LATE) -> None:
    """``times`` (each up to ``late`` seconds after the event it records) are paced at one per
    ``spacing``: the k-th is at least k spacings after the first, and no second-long window holds
    more than a second's worth of spacings plus what lateness can crowd into it. Unpaced times
    (a burst) fail both."""
    times = sorted(times)
    assert all(t - times[0] >= k * spacing - late for k, t in enumerate(times)), [round(t - times[0], 3) for t in times]
    most = int((1.0 + late) / spacing) + 1
    crowded = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert crowded <= most, (crowded, most, [round(t - times[0], 3) for t in times])


class ChatServer:
    def __init__(self, script: Callable[[dict, int], Reply] = default_script, *, latency: float = 0.0):
        self.script = script
        self.latency = latency
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    index = len(server.requests)
                    server.requests.append(body)
                    server.times.append(arrived)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server.script(body, index)
                    delay = server.latency if reply.delay is None else reply.delay
                    if delay:
                        time.sleep(delay)
                    if reply.status == 200:
                        payload = {
                            "id": f"chatcmpl-{index}", "object": "chat.completion", "created": int(time.time()),
                            "model": body.get("model", ""),
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": reply.content}}],
                            "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                                      "total_tokens": sum(reply.usage)},
                        }
                    else:
                        payload = {"error": {"message": reply.error, "type": "server_error", "code": reply.status}}
                    data = json.dumps(payload).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    with server.lock:
                        server.in_flight -= 1

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> "ChatServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def user_prompts(self) -> list[str]:
        return [r["messages"][-1]["content"] for r in self.requests]
