"""A bounded crawler over the Django test client (issue 22, point 4: no 500 anywhere).

``crawl`` starts from a few URLs and follows, breadth first, every link a page offers inside the
site: ``href``s, the htmx attributes (``hx-get`` and the writing ``hx-post``/``hx-put``/
``hx-patch``/``hx-delete``, sent with htmx's ``HX-Request`` header), form actions (a GET form is
submitted with its default values, a POST form empty), the ``data-*-url`` attributes the page's
scripts post to, redirects, and the ``url``/``next`` fields of JSON answers. Writes are sent last,
each one empty and inside a savepoint that is rolled back, so every write sees the data every
page saw and none changes what the next one finds; the answer of a write is checked, not
followed, and its URL is also requested with GET (a 405, never a 500).

It stays bounded by visiting at most ``per_route`` URLs of each (method, htmx or not, route name,
project) — the project is the URL's ``slug`` or, for a URL without one (a response's side-by-side
page, a data job), the project of the page the link was found on — so a page template is visited a
few times per project, not once per row. The start URLs are always visited. ``limit`` stops a
crawl that would still explode; it is reported, not silently accepted. Never followed: /static/,
logging out, other origins, and the admin's writes (its delete confirmations are pages like any
other, and are never confirmed).
"""
import json
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

from django.db import transaction
from django.urls import Resolver404, resolve

ORIGIN = "http://testserver"
SKIPPED_PREFIXES = ("/static/", "/accounts/logout/", "/admin/logout/")
WRITES = ("post", "put", "patch", "delete")
HTMX_HEADERS = {"HTTP_HX_REQUEST": "true"}
START = "(start)"
REFUSALS = (401, 403, 404)


@dataclass(frozen=True)
class Link:
    method: str  # get, post, put, patch or delete
    url: str  # path and query, no fragment
    htmx: bool = False


@dataclass
class Answer:
    link: Link
    status: int
    found_on: str
    error: str = ""  # the traceback of a server error
    seconds: float = 0.0  # how long the answer took (for ``Crawl.summary``; never asserted)


@dataclass
class Crawl:
    answers: list[Answer] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # links left out by the per-route cap, by route
    truncated: bool = False  # the limit was reached with links still waiting

    def server_errors(self) -> list[Answer]:
        return [a for a in self.answers if a.status >= 500]

    def routes(self) -> set[str]:
        """The route names that answered at least once: a page (2xx, 3xx), or a write that was not
        refused (401, 403, 404; an empty form may well be a 400)."""
        return {route_of(a.link.url) for a in self.answers
                if a.status < 400 or (a.link.method in WRITES and a.status not in REFUSALS)}

    def summary(self, slowest: int = 8) -> str:
        """What the crawl did, for a failure message: answers by status, skipped links by route and
        the routes that took the longest."""
        seconds, count = Counter(), Counter()
        for a in self.answers:
            seconds[route_of(a.link.url)] += a.seconds
            count[route_of(a.link.url)] += 1
        statuses = Counter(a.status for a in self.answers)
        slow = ", ".join(f"{route} {count[route]}x {total:.1f} s" for route, total in seconds.most_common(slowest))
        return (f"{len(self.answers)} answers {dict(sorted(statuses.items()))}; links left out by the per-route cap: "
                f"{dict(self.skipped.most_common(slowest))}; slowest routes: {slow}")

    def projects(self) -> set[str]:
        """The project slugs of the URLs that answered (2xx or 3xx) at least once."""
        return {slug for a in self.answers if a.status < 400 and (slug := _slug_of(a.link.url))}


def route_of(url: str) -> str:
    try:
        return resolve(urlsplit(url).path).view_name or "?"
    except Resolver404:
        return "(no route)"


class _LinkParser(HTMLParser):
    """The links of one HTML page, as (method, URL, htmx) with the URL as written."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str, bool]] = []
        self._form: dict | None = None  # the GET form being read: action and default fields
        self._select: tuple[str, list[str]] | None = None  # name, [the first option's value or the selected one's]
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag in ("a", "area") and "href" in a:
            self.links.append(("get", a["href"], False))
        for method in ("get", *WRITES):
            if f"hx-{method}" in a:
                self.links.append((method, a[f"hx-{method}"] or "", True))
        for name, value in a.items():  # URLs the page's scripts call (data-time-url, data-batch-url)
            if name.startswith("data-") and name.endswith("-url") and value:
                self.links.append(("post", value, False))
        if tag == "form":
            method = (a.get("method") or "get").lower()
            if method == "get":
                self._form = {"action": a.get("action", ""), "fields": []}
            elif method == "post" and "hx-post" not in a:  # an htmx form was taken above, with its htmx header
                self.links.append(("post", a.get("action", ""), False))
        if tag in ("button", "input") and "formaction" in a:  # a submit button that sends its form elsewhere
            self.links.append(((a.get("formmethod") or "get").lower(), a["formaction"], False))
        if self._form is None:
            return
        if tag == "input" and a.get("name") and not {"disabled"} & set(a):
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind not in ("submit", "button", "image", "file", "reset"):
                self._form["fields"].append((a["name"], a.get("value", "on" if kind == "checkbox" else "")))
        elif tag == "select" and a.get("name"):
            self._select = (a["name"], [])
        elif tag == "option" and self._select is not None:
            value = a.get("value")
            if not self._select[1] or "selected" in a:
                self._select[1][:] = [value if value is not None else ""]
        elif tag == "textarea" and a.get("name"):
            self._textarea = a["name"]
            self._form["fields"].append((a["name"], ""))

    def handle_data(self, data):
        if self._textarea is not None and self._form is not None:
            name, text = self._form["fields"][-1]
            self._form["fields"][-1] = (name, text + data)

    def handle_endtag(self, tag):
        if tag == "select" and self._select is not None and self._form is not None:
            name, chosen = self._select
            self._form["fields"].append((name, chosen[0] if chosen else ""))
            self._select = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "form" and self._form is not None:
            action = self._form["action"]
            query = urlencode(self._form["fields"])
            self.links.append(("get", f"{action.split('?')[0]}?{query}" if query else action, False))
            self._form = None


def _json_links(value) -> list[str]:
    """The URLs a JSON answer offers: values of keys named ``url``, ``*_url``, ``next``, ``previous``."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key in ("url", "next", "previous") or key.endswith("_url")):
                found.append(item)
            else:
                found += _json_links(item)
    elif isinstance(value, list):
        for item in value:
            found += _json_links(item)
    return found


def links_of(body: bytes, content_type: str, base: str) -> list[Link]:
    """The links in an answer, made absolute paths of this site (others are left out)."""
    if content_type.startswith("text/html"):
        parser = _LinkParser()
        parser.feed(body.decode("utf-8", errors="replace"))
        raw = parser.links
    elif content_type.startswith("application/json"):
        try:
            raw = [("get", url, False) for url in _json_links(json.loads(body))]
        except ValueError:
            return []
    else:
        return []
    return [Link(method, local, htmx) for method, url, htmx in raw if (local := _local(url, base)) is not None]


def _local(url: str, base: str) -> str | None:
    """``url`` as written on page ``base``, as a path and query of this site (None: elsewhere)."""
    if url.startswith(("mailto:", "javascript:", "data:", "tel:", "#")):
        return None
    parts = urlsplit(urljoin(ORIGIN + base, url))
    if f"{parts.scheme}://{parts.netloc}" != ORIGIN:
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _body(response) -> bytes:
    if getattr(response, "streaming", False):
        # Through the test client's wrapper (see tests/test_role_matrix.py: closing the response
        # directly would close the test's PostgreSQL connection).
        return b"".join(response.streaming_content)
    return response.content


def _slug_of(url: str) -> str | None:
    try:
        return resolve(urlsplit(url).path).kwargs.get("slug")
    except Resolver404:
        return None


def crawl(client, starts: list[str], *, within: str = "/", outside: tuple[str, ...] = (), per_route: int = 3,
          limit: int = 3000) -> Crawl:
    """Every page under ``within`` and not under ``outside`` reachable from ``starts`` (paths, each
    visited whatever the per-route cap), within the bounds above; every request in a savepoint
    rolled back after it."""
    def skip(link: Link) -> bool:
        path = urlsplit(link.url).path
        return (not path.startswith(within) or path.startswith(SKIPPED_PREFIXES + outside)
                or (link.method in WRITES and path.startswith("/admin/")))

    result = Crawl()
    queue = deque((Link("get", url), START, _slug_of(url)) for url in starts)
    writes: list[tuple[Link, str]] = []
    seen: set[Link] = set()
    per_key: Counter = Counter()

    def admit(link: Link, project: str | None) -> bool:
        key = (link.method, link.htmx, route_of(link.url), _slug_of(link.url) or project)
        if per_key[key] >= per_route:
            result.skipped[key[2]] += 1
            return False
        per_key[key] += 1
        return True

    def request(link: Link, found_on: str) -> tuple[object, bytes]:
        headers = HTMX_HEADERS if link.htmx else {}
        started = time.perf_counter()
        with transaction.atomic():
            response = getattr(client, link.method)(link.url, **headers)
            body = _body(response)
            transaction.set_rollback(True)
        error = "".join(traceback.format_exception(*response.exc_info)) if response.exc_info else ""
        result.answers.append(Answer(link, response.status_code, found_on, error, time.perf_counter() - started))
        return response, body

    while queue:
        link, found_on, project = queue.popleft()
        if link in seen or skip(link):
            continue
        seen.add(link)
        if found_on != START and not admit(link, project):
            continue
        if link.method in WRITES:
            writes.append((link, found_on))
            queue.append((Link("get", link.url), found_on, project))  # a GET of a write must be harmless too (405)
            continue
        if len(result.answers) >= limit:
            result.truncated = True
            break
        response, body = request(link, found_on)
        here = _slug_of(link.url) or project
        found = links_of(body, response.get("Content-Type", ""), link.url)
        if response.status_code in (301, 302, 303, 307, 308) and (target := _local(response["Location"], link.url)):
            found.append(Link("get", target))
        queue.extend((child, link.url, here) for child in found)
    for link, found_on in writes:
        if len(result.answers) >= limit:
            result.truncated = True
            break
        request(link, found_on)
    return result
