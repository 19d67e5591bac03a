"""Response headers that depend on who asked: an answer to an authenticated request (a session's
page or partial, an API answer to a token or a session, a download) carries Django's never-cache
headers, ``Cache-Control: max-age=0, no-cache, no-store, must-revalidate, private``, so neither
the browser's disk cache, its back button after a log-out, nor a shared proxy keeps a copy of
what only that user may see (issue 27). Static files are served before this (WhiteNoise) and
stay cacheable; pages for anonymous visitors (the log-in form) are left as they are."""
from django.utils.cache import add_never_cache_headers


def _authenticated(request) -> bool:
    # DRF sets ``request.user`` on the Django request when a token authenticates, so API answers
    # count too; an Authorization header counts even when it was refused (the 401 or 429 answer).
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated) or "HTTP_AUTHORIZATION" in request.META


class NoStoreMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if _authenticated(request):
            add_never_cache_headers(response)
        return response
