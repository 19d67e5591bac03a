"""The site's own 403 and 404 pages, in every environment, logged in one line.

Django answers a 404 with its debug page (which lists every URL pattern of the site) when DEBUG
is on, as it is for the demo, and logs a refused request with its traceback. This middleware
answers both with the site's templates (``403.html``, ``404.html``; with DEBUG off Django's own
handlers use the same ones). Every 403 and 404 answer, the API's JSON ones too, is logged as one
warning line (status, method, path, user) by ``evalsite.refused``; Django's own per-response
warnings (``django.request``) are turned down to errors in the settings, so nothing is logged
twice. API views are DRF's: they answer JSON themselves and only get the log line.
"""
import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import render

logger = logging.getLogger("evalsite.refused")


def _log(request, status: int, reason: str) -> None:
    user = getattr(request, "user", None)
    name = user.username if user is not None and user.is_authenticated else "-"
    logger.warning("%s %s %s (user %s): %s", status, request.method, request.path, name, reason)


def _page(request, status: int, reason: str):
    return render(request, f"{status}.html", {"reason": reason if status == 403 else ""}, status=status)


class ErrorPagesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code not in (403, 404):
            return response
        reason = getattr(response, "refusal_reason", None)
        if response.status_code == 404 and getattr(request, "resolver_match", None) is None:  # no URL pattern matched
            reason = "no such page"
            response = JsonResponse({"detail": "Not found."}, status=404) if request.path.startswith("/api/") else _page(request, 404, "")
        _log(request, response.status_code, reason or response.reason_phrase.lower())
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, (Http404, PermissionDenied)):
            status = 404 if isinstance(exception, Http404) else 403
            reason = str(exception) or ("not found" if status == 404 else "not allowed")
            response = _page(request, status, reason)
            response.refusal_reason = reason
            return response
        return None


def _size(n: int) -> str:
    return f"{n / 1024**2:,.1f} MiB" if n >= 1024**2 else f"{n / 1024:,.1f} KiB"


class RequestSizeMiddleware:
    """Bodies over the size limits are refused before they are read, with a 413 that says the
    limit: bundle uploads (multipart) up to ``EVALSITE_MAX_UPLOAD_BYTES`` (plus room for the
    form's other fields), anything else up to ``DATA_UPLOAD_MAX_MEMORY_SIZE``. JSON under /api/,
    the site's page elsewhere."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        multipart = request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data")
        limit = settings.EVALSITE_MAX_UPLOAD_BYTES + 64 * 1024 if multipart else settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if length <= limit:
            return self.get_response(request)
        message = (f"the {'upload' if multipart else 'request body'} is {_size(length)}; the limit is {_size(limit)}"
                   + (" for a bundle (EVALSITE_MAX_UPLOAD_BYTES)" if multipart else ""))
        _log(request, 413, message)
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=413)
        return render(request, "413.html", {"reason": message}, status=413)
