"""Who a request comes from, for every throttle: the API's anonymous and per-user rates, the
failed-token count (``evalsite.api_auth``), the report-interval rate and django-axes' login
lockout all count against ``client_address(request)`` and nothing else (SPEC §6).

``X-Forwarded-For`` is written by whoever sends the request, so it is believed only as far as
the operator says proxies of their own append to it: ``EVALSITE_TRUSTED_PROXIES`` (0 by default)
is the number of such proxies in front of the app. With 0 the header is ignored and the address is
the connection's (``REMOTE_ADDR``); with N the address is the N-th entry from the right, the one
the outermost trusted proxy appended (the leftmost when there are fewer entries, as DRF's
``NUM_PROXIES``, which the settings set from the same number). Whatever a client puts in front of
those entries is never read, so changing it neither escapes a throttle nor counts against
another client's address.
"""
import ipaddress

from django.conf import settings
from rest_framework import throttling


def trusted_proxies() -> int:
    return int(getattr(settings, "EVALSITE_TRUSTED_PROXIES", 0) or 0)


def client_address(request) -> str:
    """The address a request is counted against (a Django or DRF request)."""
    meta = request.META
    remote = meta.get("REMOTE_ADDR") or ""
    proxies = trusted_proxies()
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    entries = [entry.strip() for entry in forwarded.split(",")]
    chosen = entries[-min(proxies, len(entries))]
    try:
        return str(ipaddress.ip_address(chosen))
    except ValueError:
        # A trusted proxy writes addresses; anything else came from the client: not believed.
        return remote


class ClientAddressMixin:
    """DRF's throttles identify an anonymous caller by ``get_ident``: ours is ``client_address``."""

    def get_ident(self, request) -> str:
        return client_address(request)


class AnonRateThrottle(ClientAddressMixin, throttling.AnonRateThrottle):
    """DRF's anonymous rate (``API_ANON_RATE``), per client address."""


class UserRateThrottle(ClientAddressMixin, throttling.UserRateThrottle):
    """DRF's per-user rate (``API_USER_RATE``); an anonymous caller by client address."""
