"""Which endpoints a judge may call, and which credential goes to each (issues 11 and 27): only
what the operator lists in ``EVALSITE_JUDGE_ENDPOINTS`` (SPEC §6).

Each entry pairs a base-URL prefix with the one environment variable whose value (an API key) is
sent to it, or with none (a server that needs no key). A judge passes when an entry's prefix
covers its base URL and the entry names the judge's key variable; a judge without a key variable
may use any listed endpoint. So a key is never sent to an endpoint it is not paired with, and a
judge can never make the worker read ``SECRET_KEY``, ``DATABASE_URL`` or another variable nobody
paired with an endpoint. (The two independent lists this replaces, ``EVALSITE_JUDGE_CREDENTIALS``
and ``EVALSITE_JUDGE_BASE_URLS``, let any listed key go to any listed URL.)

URLs are normalized before they are compared, and the normalized URL is the one called:
scheme and host in lower case, the default port of the scheme made explicit, percent-encoded
unreserved characters decoded (``%2e`` is a dot). A prefix is then compared by its parts, not as
text: same scheme, same host, the same port when the prefix names one (any port when it does
not), and a path under the prefix's path, segment by segment. A base URL with a user name or
password, a query, a fragment, a backslash, a control character or a ``.`` or ``..`` segment (also
percent-encoded, once or more) is refused, so ``http://127.0.0.1@evil.example``,
``http://127.0.0.1.evil.example`` or ``/v1/%2e%2e/admin`` never pass. An empty base URL means the
official endpoint, ``DEFAULT_BASE_URL``, which must be listed like any other.

``endpoint_problems`` says what is wrong (field → message); ``judge_validate``, the importer and
the chat backend (at call time, before any request) all ask it, so a judge stored before the
list changed is refused too. ``redact`` takes a key and anything that looks like an
authorization header out of a text that is about to be stored.
"""
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_PORTS = {"http": 80, "https": 443}
REPLACED_SETTINGS = ("EVALSITE_JUDGE_CREDENTIALS", "EVALSITE_JUDGE_BASE_URLS")
_SCHEME = re.compile(r"(?i)\b(bearer|basic)\s+[^\s,;\"']+")
_HEADER = re.compile(r"(?i)\b(authorization|x-api-key|api[-_]?key)(\"?\s*[:=]\s*\"?)[^\s,;\"']+")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


class UrlRefused(ValueError):
    """A URL that cannot be a base URL at all; the message says why."""


@dataclass(frozen=True)
class NormalUrl:
    scheme: str
    host: str  # lower case; an IPv6 address in brackets
    port: int | None  # as written (the scheme's default made explicit); None: not written
    path: str  # unreserved escapes decoded, no trailing slash

    def effective_port(self) -> int:
        return self.port if self.port is not None else DEFAULT_PORTS[self.scheme]

    def url(self) -> str:
        """The URL to call: the port only when it is not the scheme's default."""
        port = "" if self.effective_port() == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}{self.path}"

    def covers(self, other: "NormalUrl") -> bool:
        """``other`` is under this prefix: scheme, host, port (when this one names it), path segments."""
        if (other.scheme, other.host) != (self.scheme, self.host):
            return False
        if self.port is not None and other.effective_port() != self.effective_port():
            return False
        return not self.path or other.path == self.path or other.path.startswith(self.path + "/")


@dataclass(frozen=True)
class Endpoint:
    prefix: str  # as configured, for messages
    normal: NormalUrl
    credential: str  # the variable sent to it; "" for none


def _decode_unreserved(path: str) -> str:
    """RFC 3986 §6.2.2: escapes of unreserved characters decoded, the others' hex in upper case."""
    def one(match: re.Match) -> str:
        char = chr(int(match[1], 16))
        return char if char in _UNRESERVED else f"%{match[1].upper()}"
    return _ESCAPE.sub(one, path)


def _fully_decoded(path: str) -> str:
    """What a server that decodes, even more than once, may read the path as."""
    for _ in range(4):
        decoded = unquote(path)
        if decoded == path:
            break
        path = decoded
    return path


def url_normalize(url: str) -> NormalUrl:
    """``url`` in the one form it is compared and called in; ``UrlRefused`` when it cannot be a
    base URL (the message says why)."""
    if _CONTROL.search(url) or "\\" in url:
        raise UrlRefused("must not contain spaces, control characters or backslashes")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UrlRefused("is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise UrlRefused("must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UrlRefused("must not carry a user name or password")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise UrlRefused("must not have a query or a fragment")
    host = parts.hostname.lower()
    if "%" in host:
        raise UrlRefused("must name its host without percent-encoding")
    if ":" in host:
        host = f"[{host}]"
    decoded = _fully_decoded(parts.path)
    if "\\" in decoded or _CONTROL.search(decoded) or any(s in (".", "..") for s in decoded.split("/")):
        raise UrlRefused("must not contain '.' or '..' segments (nor their percent-encodings)")
    return NormalUrl(scheme=scheme, host=host, port=port, path=_decode_unreserved(parts.path).rstrip("/"))


def judge_endpoints() -> list[Endpoint]:
    """``EVALSITE_JUDGE_ENDPOINTS`` as endpoints; ``ImproperlyConfigured`` for an entry that is
    not a usable prefix, or when the settings still hold the two lists it replaced."""
    replaced = [name for name in REPLACED_SETTINGS if getattr(settings, name, None)]
    if replaced:
        raise ImproperlyConfigured(f"{' and '.join(replaced)}: replaced by EVALSITE_JUDGE_ENDPOINTS, which pairs "
                                   "each base URL with the one variable sent to it (README, Deployment)")
    endpoints = []
    for entry in getattr(settings, "EVALSITE_JUDGE_ENDPOINTS", None) or []:
        try:
            prefix, credential = entry
        except (TypeError, ValueError):
            raise ImproperlyConfigured(f"EVALSITE_JUDGE_ENDPOINTS: {entry!r} is not a (base URL, variable) pair") from None
        try:
            normal = url_normalize(prefix)
        except UrlRefused as exc:
            raise ImproperlyConfigured(f"EVALSITE_JUDGE_ENDPOINTS: {prefix!r} {exc}") from None
        endpoints.append(Endpoint(prefix=prefix, normal=normal, credential=credential or ""))
    return endpoints


def allowed_base_urls() -> list[str]:
    return list(dict.fromkeys(e.prefix for e in judge_endpoints()))


def allowed_credentials() -> list[str]:
    return list(dict.fromkeys(e.credential for e in judge_endpoints() if e.credential))


def endpoints_described() -> str:
    """The configured endpoints for a message or a help text, one entry per prefix with the key
    variables paired with it: ``prefix (key A or B; or no key)``, ..."""
    keys: dict[str, list[str]] = {}
    for e in judge_endpoints():
        keys.setdefault(e.prefix, []).append(e.credential)
    described = []
    for prefix, credentials in keys.items():
        named = [c for c in credentials if c]
        words = ("key " + " or ".join(named) if named else "") + (("; or " if named else "") + "no key" if "" in credentials else "")
        described.append(f"{prefix} ({words})")
    return ", ".join(described) if described else "none is configured"


def endpoint_url(base_url: str) -> str:
    """The URL a judge with ``base_url`` calls (normalized); ``UrlRefused`` when it cannot be one."""
    return url_normalize(base_url or DEFAULT_BASE_URL).url()


def base_url_allowed(url: str) -> bool:
    """``url`` (empty: the official endpoint) is under a listed endpoint, whatever its key."""
    try:
        normal = url_normalize(url or DEFAULT_BASE_URL)
    except UrlRefused:
        return False
    return any(e.normal.covers(normal) for e in judge_endpoints())


def endpoint_problems(*, base_url: str, api_key_env: str, calls_out: bool) -> dict[str, str]:
    """What is wrong with a judge's endpoint and key: ``{"base_url" | "api_key_env": message}``,
    empty when nothing is. ``calls_out``: the judge calls a server (its base URL matters; a judge
    that calls nobody may still name only a variable some endpoint is paired with)."""
    endpoints = judge_endpoints()
    problems = {}
    if api_key_env and api_key_env not in {e.credential for e in endpoints}:
        problems["api_key_env"] = (f"{api_key_env!r} is not a credential this deployment allows "
                                   f"(EVALSITE_JUDGE_ENDPOINTS: {endpoints_described()})")
    if not calls_out:
        return problems
    url = base_url or DEFAULT_BASE_URL
    try:
        normal = url_normalize(url)
    except UrlRefused as exc:
        problems["base_url"] = f"base URL {url!r} {exc}"
        return problems
    covering = [e for e in endpoints if e.normal.covers(normal)]
    if not covering:
        problems["base_url"] = (f"base URL {url!r} is not under an endpoint this deployment allows "
                                f"(EVALSITE_JUDGE_ENDPOINTS: {endpoints_described()})")
    elif api_key_env and "api_key_env" not in problems and api_key_env not in {e.credential for e in covering}:
        bound = ", ".join(dict.fromkeys(e.prefix for e in endpoints if e.credential == api_key_env))
        problems["api_key_env"] = (f"{api_key_env!r} is sent only to {bound}, never to {url!r} "
                                   "(EVALSITE_JUDGE_ENDPOINTS pairs each key with its endpoints)")
    return problems


def redact(text: str, secret: str | None = None) -> str:
    """``text`` without ``secret`` and without the value of anything that looks like an
    authorization header or key parameter (a server may echo the request back)."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    text = _SCHEME.sub(lambda m: f"{m.group(1)} [redacted]", text)
    return _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)


def endpoints_check(app_configs=None, **kwargs) -> list:
    """System check (``manage.py check``, ``migrate``, ``runserver``): the endpoint list parses."""
    try:
        judge_endpoints()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="grading.E001")]
    return []


def _exactly(texts) -> str:
    """A pattern (ECMA and Python alike) matching exactly one of ``texts``."""
    return "^(" + "|".join(re.sub(r"([.^$*+?()\[\]{}|\\/])", r"\\\1", t) for t in texts) + ")$"


def endpoint_schema(*, calls_out: bool) -> dict:
    """What ``endpoint_problems`` takes, as JSON Schema for a judge's request body (the API's
    schema states it): a judge that calls out names one of the listed base URLs (empty: the
    official endpoint, when it is listed) with no key variable or one paired with it; any judge
    names only a variable some endpoint is paired with. (A base URL under a listed prefix, or one
    written differently, is taken too; the schema names the prefixes themselves.)"""
    endpoints = judge_endpoints()
    every_key = {"type": "string", "enum": ["", *dict.fromkeys(e.credential for e in endpoints if e.credential)]}
    if not calls_out:
        return {"properties": {"api_key_env": every_key}}
    branches, seen = [], set()
    for written, url in [("", DEFAULT_BASE_URL), *((e.prefix, e.prefix) for e in endpoints)]:
        normal = url_normalize(url)
        covering = [e for e in endpoints if e.normal.covers(normal)]
        if not covering or written in seen:
            continue
        seen.add(written)
        keys = dict.fromkeys(e.credential for e in covering if e.credential)
        # Patterns, not enums: one text each, as drf-spectacular's enum hook would merge enums by name.
        branches.append({"properties": {"base_url": {"type": "string", "pattern": _exactly([written])},
                                        "api_key_env": {"type": "string", "pattern": _exactly(["", *keys])}},
                         **({"required": ["base_url"]} if written else {})})
    if not branches:  # nothing is listed: no judge that calls out can be saved
        return {"properties": {"api_key_env": every_key}, "not": {}}
    return {"properties": {"api_key_env": every_key}, "anyOf": branches}
