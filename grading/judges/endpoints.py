"""Which credentials and endpoints a judge may use (issue 11): only what the operator lists.

- ``EVALSITE_JUDGE_CREDENTIALS``: the names of the environment variables that hold API keys a
  judge may name (comma-separated in the environment). Any other name is refused, so a judge can
  never make the worker read ``SECRET_KEY``, ``DATABASE_URL`` or another secret of its own.
- ``EVALSITE_JUDGE_BASE_URLS``: the URL prefixes a judge's base URL must start with. A prefix is
  compared by its parts, not as text: same scheme, same host, the same port when the prefix
  names one (any port when it does not), and a path under the prefix's path, segment by
  segment. A base URL with a user name or password, a query, a fragment or a ``..`` segment is
  refused, so ``http://127.0.0.1@evil.example`` or ``http://127.0.0.1.evil.example`` never
  pass for loopback. An empty base URL means the official endpoint, ``DEFAULT_BASE_URL``, which
  must be listed like any other.

``endpoint_problems`` says what is wrong (field → message); ``judge_validate``, the importer and
the chat backend (at call time, before any request) all ask it, so a judge stored before the
lists changed is refused too. ``redact`` takes a key and anything that looks like an
authorization header out of a text that is about to be stored.
"""
import re
from urllib.parse import urlsplit

from django.conf import settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_SCHEME = re.compile(r"(?i)\b(bearer|basic)\s+[^\s,;\"']+")
_HEADER = re.compile(r"(?i)\b(authorization|x-api-key|api[-_]?key)(\"?\s*[:=]\s*\"?)[^\s,;\"']+")


def allowed_credentials() -> list[str]:
    return [name for name in getattr(settings, "EVALSITE_JUDGE_CREDENTIALS", []) if name]


def allowed_base_urls() -> list[str]:
    return [url for url in getattr(settings, "EVALSITE_JUDGE_BASE_URLS", []) if url]


def _listed(values: list[str]) -> str:
    return ", ".join(values) if values else "none is configured"


def _url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a base URL at all (None when its form is fine)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        return "must not carry a user name or password"
    if parts.query or parts.fragment:
        return "must not have a query or a fragment"
    if ".." in parts.path.split("/"):
        return "must not contain '..'"
    return None


def _under(url: str, prefix: str) -> bool:
    candidate, allowed = urlsplit(url), urlsplit(prefix)
    if (candidate.scheme, candidate.hostname) != (allowed.scheme, allowed.hostname):
        return False
    if allowed.port is not None and candidate.port != allowed.port:
        return False
    root = allowed.path.rstrip("/")
    path = candidate.path.rstrip("/")
    return not root or path == root or path.startswith(root + "/")


def base_url_allowed(url: str) -> bool:
    url = url or DEFAULT_BASE_URL
    return _url_problem(url) is None and any(_under(url, prefix) for prefix in allowed_base_urls())


def endpoint_problems(*, base_url: str, api_key_env: str, calls_out: bool) -> dict[str, str]:
    """What is wrong with a judge's endpoint: ``{"base_url" | "api_key_env": message}``, empty
    when nothing is. ``calls_out``: the judge calls a server (its base URL matters)."""
    problems = {}
    if api_key_env and api_key_env not in allowed_credentials():
        problems["api_key_env"] = (f"{api_key_env!r} is not a credential this deployment allows "
                                   f"(EVALSITE_JUDGE_CREDENTIALS: {_listed(allowed_credentials())})")
    if calls_out:
        url = base_url or DEFAULT_BASE_URL
        shape = _url_problem(url)
        if shape:
            problems["base_url"] = f"base URL {url!r} {shape}"
        elif not base_url_allowed(url):
            problems["base_url"] = (f"base URL {url!r} is not under an endpoint this deployment allows "
                                    f"(EVALSITE_JUDGE_BASE_URLS: {_listed(allowed_base_urls())})")
    return problems


def redact(text: str, secret: str | None = None) -> str:
    """``text`` without ``secret`` and without the value of anything that looks like an
    authorization header or key parameter (a server may echo the request back)."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    text = _SCHEME.sub(lambda m: f"{m.group(1)} [redacted]", text)
    return _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
