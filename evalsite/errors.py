"""The site's own 403, 404 and 500 pages, in every environment, logged once.

Django answers a 404 with its debug page (which lists every URL pattern of the site) when DEBUG
is on, as it is for the demo, and logs a refused request with its traceback. This middleware
answers both with the site's templates (``403.html``, ``404.html``; with DEBUG off Django's own
handlers use the same ones). Every 403 and 404 answer, the API's JSON ones too, is logged as one
warning line (status, method, path, user) by ``evalsite.refused``; Django's own per-response
warnings (``django.request``) are turned down to errors in the settings, so nothing is logged
twice. API views are DRF's: they answer JSON themselves and only get the log line.

A request the site cannot read (``BadRequest`` raised by a view, or a NUL character in the URL,
the query or a form field: ``RequestTextMiddleware``) is a 400 with the reason on the site's
``400.html`` (JSON under /api/), logged in one line like the 403s and 404s.

A server error gets a short error id, logged with its traceback by ``evalsite.errors`` and shown
on the site's ``500.html`` (under /api/: ``{"detail": "Server error", "error_id": ...}``), so a
user can quote it and whoever runs the site can find the traceback. Never Django's debug page,
which shows the settings and the process's environment: with DEBUG on (the demo) the middleware
answers a view's exception itself, with DEBUG off Django calls ``server_error`` (``handler500``
in ``evalsite.urls``), which also serves an exception raised outside any view.
"""
import logging
import sys
import uuid

from django.conf import settings
from django.core import signals
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.http import Http404, HttpResponseServerError, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.debug import ExceptionReporter

logger = logging.getLogger("evalsite.refused")
server_logger = logging.getLogger("evalsite.errors")
# Exceptions Django answers with a 4xx itself (its debug page for them under DEBUG is a 400's).
CLIENT_ERRORS = (Http404, PermissionDenied, BadRequest, SuspiciousOperation, MultiPartParserError)


def _log(request, status: int, reason: str) -> None:
    user = getattr(request, "user", None)
    name = user.username if user is not None and user.is_authenticated else "-"
    logger.warning("%s %s %s (user %s): %s", status, request.method, request.path, name, reason)


def _page(request, status: int, reason: str):
    return render(request, f"{status}.html", {"reason": reason if status in (400, 403) else ""}, status=status)


def bad_request(request, reason: str):
    """A 400 saying ``reason``: JSON ``{"detail": reason}`` under /api/, the site's page elsewhere."""
    reason = reason.rstrip(". ")  # the page ends the sentence itself
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": reason}, status=400)
    else:
        response = _page(request, 400, reason)
    response.refusal_reason = reason
    return response


class ErrorPagesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        refused = response.status_code in (403, 404) or (response.status_code == 400 and hasattr(response, "refusal_reason"))
        if not refused:
            return response
        reason = getattr(response, "refusal_reason", None)
        if response.status_code == 404 and getattr(request, "resolver_match", None) is None:  # no URL pattern matched
            reason = "no such page"
            response = JsonResponse({"detail": "Not found."}, status=404) if request.path.startswith("/api/") else _page(request, 404, "")
        _log(request, response.status_code, reason or response.reason_phrase.lower())
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, BadRequest):
            return bad_request(request, str(exception) or "the request could not be read")
        if isinstance(exception, (Http404, PermissionDenied)):
            status = 404 if isinstance(exception, Http404) else 403
            reason = str(exception) or ("not found" if status == 404 else "not allowed")
            response = _page(request, status, reason)
            response.refusal_reason = reason
            return response
        if settings.DEBUG and not isinstance(exception, CLIENT_ERRORS):
            # What Django does before its debug page: whoever listens for errors still hears of it.
            signals.got_request_exception.send(sender=None, request=request)
            return server_error_response(request, (type(exception), exception, exception.__traceback__))
        return None


def _username(request) -> str:
    try:
        user = request.user
        return user.username if user.is_authenticated else "-"
    except Exception:  # the error being reported may be the database the user comes from
        return "?"


def server_error_response(request, exc_info) -> HttpResponseServerError | JsonResponse:
    """Log ``exc_info`` with a new error id and answer the site's 500 page (JSON under /api/)
    that shows the id and nothing else."""
    error_id = uuid.uuid4().hex[:12]
    server_logger.error("500 %s %s (user %s): error id %s", request.method, request.path, _username(request), error_id,
                        exc_info=exc_info, extra={"error_id": error_id, "status_code": 500, "request": request})
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": "Server error", "error_id": error_id}, status=500)
    else:
        try:
            html = render_to_string("500.html", {"error_id": error_id})  # no request: no context processor can fail
        except Exception:  # the page that says something broke must not break in turn
            server_logger.exception("the 500 page could not be rendered (error id %s)", error_id)
            html = f"<!doctype html><title>Server error</title><h1>Server error</h1><p>Error id {error_id}</p>"
        response = HttpResponseServerError(html)
    response.error_id = error_id
    # The record above has the traceback and the id; Django's own "Internal Server Error" one would repeat it.
    response._has_been_logged = True
    return response


class SiteExceptionReporter(ExceptionReporter):
    """Django's debug pages with DEBUG on, for what the middleware cannot answer itself (an exception
    in another middleware, a disallowed Host header, a suspicious request answered 400): the same
    page with an error id, the details logged under it, never the settings or the environment."""

    def get_traceback_html(self) -> str:
        error_id = uuid.uuid4().hex[:12]
        request = self.request
        where = f"{request.method} {request.path}" if request is not None else "outside a request"
        server_logger.error("%s: error id %s", where, error_id,
                            exc_info=(self.exc_type, self.exc_value, self.tb) if self.exc_type else None,
                            extra={"error_id": error_id})
        try:
            return render_to_string("500.html", {"error_id": error_id})
        except Exception:  # the page that says something broke must not break in turn
            return f"<!doctype html><title>Server error</title><h1>Server error</h1><p>Error id {error_id}</p>"

    def get_traceback_text(self) -> str:
        return "Server error: the details are in the log (evalsite.errors)."


def server_error(request):
    """``handler500``: Django calls it (DEBUG off) while the exception is being handled."""
    return server_error_response(request, sys.exc_info())


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


def _nul_in(request) -> str | None:
    """Where the request holds a NUL character, if it does: the URL, a parameter, a form field."""
    if "\x00" in request.path:
        return "the URL"
    fields = [("parameter", request.GET)]
    # Form bodies, which the CSRF check reads anyway; the API's multipart and JSON bodies are DRF's
    # to parse (its fields refuse a NUL too).
    form = request.content_type == "application/x-www-form-urlencoded" or (
        request.content_type == "multipart/form-data" and not request.path.startswith("/api/"))
    if request.method == "POST" and form:
        try:
            fields.append(("form field", request.POST))
        except UnreadablePostError:  # the client went away: the CSRF check answers it, as before
            pass
    for kind, data in fields:
        for name, values in data.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return f"the {kind} {name.replace(chr(0), '?')!r}"
    return None


class RequestTextMiddleware:
    """A NUL character (``%00``) in the URL, the query or a form-encoded field is refused with a 400
    naming where, before any view reads it. PostgreSQL cannot store or even compare text holding
    one (a ``DataError``: a 500, issue 27), and no page or API parameter has a use for it. Django's
    form fields and DRF's serializer fields refuse it too; this also covers the parameters views
    read themselves (``?response=``, ``?case=``, ``?q=``, ...), on every database alike."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        where = _nul_in(request)
        if where is not None:
            reason = f"{where} holds a NUL character (%00)"
            _log(request, 400, reason)  # outside ErrorPagesMiddleware: it does not see this answer
            return bad_request(request, reason)
        return self.get_response(request)
