"""Token authentication for the API, with failed attempts throttled per address.

DRF checks throttles only after authentication has succeeded, so a guessed token would be
answered as often as it is sent. Here each request carrying a wrong token counts against its
address (``evalsite.throttling.client_address``: ``X-Forwarded-For`` only as far as
``EVALSITE_TRUSTED_PROXIES`` says; DRF's own ``SimpleRateThrottle`` machinery, rate ``token_failure`` in
``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``, default 10 per 15 minutes); once the address has
used them up, every token request from it, the right token included, gets 429 with
``Retry-After`` until the window has passed. Login form failures are django-axes' (settings).
"""
import re

from rest_framework import authentication, exceptions, throttling

from .throttling import ClientAddressMixin

UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class TokenFailureThrottle(ClientAddressMixin, throttling.SimpleRateThrottle):
    scope = "token_failure"

    def parse_rate(self, rate):
        """DRF's ``N/unit`` plus a count of units: ``10/15min`` is 10 per 15 minutes."""
        if rate is None:
            return None, None
        number, period = rate.split("/")
        match = re.fullmatch(r"(\d*)\s*([smhd])\w*", period.strip())
        if match is None:
            raise ValueError(f"throttle rate {rate!r}: write N/UNIT or N/COUNT UNIT, e.g. 10/15min")
        return int(number), int(match[1] or 1) * UNIT_SECONDS[match[2]]

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def used_up(self, request) -> bool:
        """True when the address has no failures left (does not count this request)."""
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        return len(self.history) >= self.num_requests

    def record_failure(self, request) -> None:
        self.used_up(request)
        self.throttle_success()  # appends now to the history and stores it


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token KEY`` (DRF's ``authtoken`` keys, one per user)."""

    def authenticate(self, request):
        if not authentication.get_authorization_header(request).split():
            return None  # no token: the session may authenticate
        throttle = TokenFailureThrottle()
        if throttle.used_up(request):
            raise exceptions.Throttled(wait=throttle.wait(), detail="Too many failed token attempts from this address.")
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            throttle.record_failure(request)
            raise
