"""Playwright (Python) driving Debian's Chromium headless against pytest-django's live server.

Browser tests are marked ``browser``; they skip with a clear reason when /usr/bin/chromium is
missing (``.ci/run`` installs it). Playwright's sync API runs an event loop in this thread,
so Django's async-safety check is relaxed for these tests only. Under xdist each worker process
has its own live server (on a free port) and its own Chromium.

Nothing here waits for time: a page is ready when its script says so (``scripts_ready``), a
page has settled when it has loaded and no htmx request is in flight (``settled``), and a test
ends only once the live server is idle (``LiveServerActivity``), so the database is never
flushed under a request that is still being served.
"""
import fcntl
import os
import select
import shutil
import socket
import struct
import termios
import threading

import pytest

CHROMIUM = os.environ.get("EVALSITE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]
# How long a test's end waits for the live server to finish what the page left it (a report
# computed inside a request can take seconds on a loaded machine); past it the test errors.
IDLE_TIMEOUT_SECONDS = 60


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


class LiveServerActivity:
    """What the live server is doing, from its own socket and threads, so a test can wait until it
    does nothing: a connection being accepted, a connection serving a request, bytes that have
    arrived on an open connection and are not read yet, or a connection still waiting in the
    listening socket's accept queue. Every change towards idle notifies ``changed``, so waiting is
    event-driven.

    A browser's last request is often a ``navigator.sendBeacon`` sent while its page unloads (the
    labeling page's active time): Playwright never reports those, so only the server can tell
    when it has been served."""

    def __init__(self, httpd):
        self.httpd = httpd
        self.changed = threading.Condition()
        self.accepting = 0
        self.serving: dict[socket.socket, bool] = {}  # open connection -> serving a request now
        activity = self
        handle_noblock, get_request, shutdown_request = (
            httpd._handle_request_noblock, httpd.get_request, httpd.shutdown_request)

        def handle_request_noblock():  # the server thread: accept one connection, start its thread
            with self.changed:
                self.accepting += 1
            try:
                handle_noblock()
            finally:
                self._notify(lambda: setattr(self, "accepting", self.accepting - 1))

        def get_request_tracked():
            connection, address = get_request()
            with self.changed:
                self.serving[connection] = False
            return connection, address

        def shutdown_request_tracked(connection):
            try:
                shutdown_request(connection)
            finally:
                self._notify(lambda: self.serving.pop(connection, None))

        class Handler(httpd.RequestHandlerClass):
            def handle_one_request(self):
                activity._wait_for_request(self)
                try:
                    super().handle_one_request()
                finally:
                    activity._notify(lambda: activity.serving.__setitem__(self.connection, False))

        httpd._handle_request_noblock, httpd.get_request, httpd.shutdown_request = (
            handle_request_noblock, get_request_tracked, shutdown_request_tracked)
        httpd.RequestHandlerClass = Handler

    def _notify(self, change) -> None:
        with self.changed:
            change()
            self.changed.notify_all()

    def _wait_for_request(self, handler) -> None:
        """Block until the connection has a request (or is closed by the client), and mark it
        serving *before* anything of that request leaves the kernel: what ``idle`` reads as
        "nothing arrived" and "not serving" can never both be true of a request underway."""
        connection = handler.connection
        timeout = connection.gettimeout()
        while True:
            with self.changed:
                self.serving[connection] = True
            connection.setblocking(False)
            try:
                if handler.rfile.peek(1):  # a request, read ahead or just arrived
                    return
                try:
                    if connection.recv(1, socket.MSG_PEEK) == b"":  # closed: let the handler see it
                        return
                except BlockingIOError:
                    pass
            finally:
                connection.settimeout(timeout)
            self._notify(lambda: self.serving.__setitem__(connection, False))
            select.select([connection], [], [])

    @staticmethod
    def _unread_bytes(connection: socket.socket) -> int:
        try:
            return struct.unpack("i", fcntl.ioctl(connection.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
        except (OSError, ValueError):  # closed meanwhile
            return 0

    def _accept_queue(self) -> int:
        """Connections the kernel has completed but the server has not accepted yet (Linux's
        tcp_info of a listening socket gives that queue's length as tcpi_unacked)."""
        info = self.httpd.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 32)
        return struct.unpack("8B6I", info[:32])[12]

    def idle(self) -> bool:
        """Under ``changed``: nothing accepted, served or waiting to be read."""
        return (not self.accepting and not any(self.serving.values()) and not self._accept_queue()
                and not any(self._unread_bytes(c) for c in self.serving))

    def wait_idle(self, timeout: float) -> None:
        with self.changed:
            if not self.changed.wait_for(self.idle, timeout):
                busy = sum(self.serving.values())
                raise AssertionError(f"the live server was still serving {busy} request(s) after {timeout} s")


@pytest.fixture(autouse=True)
def empty_cache():
    """The local-memory cache outlives each test's database and is shared with the live server's
    thread; start clean. Full of earlier tests' entries, it culled a third of them on a write: a
    queue count kept and then culled before it was read sent "next item" to the queue page."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def live_server_activity(live_server):
    return LiveServerActivity(live_server.thread.httpd)


@pytest.fixture
def page(browser, live_server, live_server_activity):
    from playwright.sync_api import expect

    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)  # a bound, never a wait: every wait is for an event
    expect.set_options(timeout=10_000)  # expect's own bound (5 s by default), the same on a busy machine
    yield page
    # Leave every page (their unload handlers send their last requests now: the labeling page's
    # active-time beacon), close the context, then wait until the live server has served all of
    # it: a request still being served when the test's database is flushed holds SQLite's shared
    # in-memory database ("database table is locked") or deadlocks with the flush on PostgreSQL.
    try:
        for each in context.pages:
            each.goto("about:blank")
    finally:
        context.close()
        live_server_activity.wait_idle(IDLE_TIMEOUT_SECONDS)


@pytest.fixture
def login(page):
    """login(username, password) logs the page in through the real login form."""

    def do_login(username: str, password: str):
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        settled(page)
        return page

    return do_login


@pytest.fixture
def screenshots(tmp_path_factory):
    """Where a test keeps the screenshots it takes for a person to look at: EVALSITE_SCREENSHOTS,
    else a folder of this run's own (pytest's temporary directory, one per xdist worker)."""
    from pathlib import Path

    folder = os.environ.get("EVALSITE_SCREENSHOTS")
    folder = Path(folder) if folder else tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def scripts_ready(page) -> None:
    """Wait until the page's script has set up its keyboard (``body[data-ready]``): after a click
    that navigates, the elements can be there before the deferred script has run."""
    from playwright.sync_api import expect

    expect(page.locator("body[data-ready=true]")).to_have_count(1)


def settled(page) -> None:
    """Wait until the page has loaded, no htmx request is in flight (htmx marks the element that
    sent one with ``htmx-request`` until it is answered) and no swap is still settling (htmx marks
    swapped-in content ``htmx-added`` and its target ``htmx-settling`` until it has processed the
    new content's own htmx attributes: a link clicked before that would load a whole page)."""
    from playwright.sync_api import expect

    page.wait_for_load_state("load")
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")).to_have_count(0)
