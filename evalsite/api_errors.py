"""Which status a refused API request gets, decided in one place from the codes of its errors.

A request the schema allows can still be refused for what the server holds, not for its shape:
it names an object the project does not have (code ``not_found``, or DRF's ``does_not_exist`` of
a related field): a 404; or the objects are in a state that does not allow it (code
``conflict``: a name taken, an assignment with undecided criteria): a 409. Every other refusal is
a 400. Serializer fields, views and services raise their ``ValidationError`` with the code; DRF's
exception handler (``exception_handler``, the API's) and the views' own answers
(``refusal`` for DRF's errors, ``django_refusal`` for a service's) read it, so the status and the
body (the fields with what is wrong, and ``detail``) are the same everywhere.
"""
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .codes import CONFLICT, NOT_FOUND

_STATUS = {NOT_FOUND: status.HTTP_404_NOT_FOUND, "does_not_exist": status.HTTP_404_NOT_FOUND,
           CONFLICT: status.HTTP_409_CONFLICT}


def _leaves(errors):
    """(message, code) of every error in DRF's nested errors (dicts and lists of ErrorDetail)."""
    if isinstance(errors, dict):
        for value in errors.values():
            yield from _leaves(value)
    elif isinstance(errors, list):
        for value in errors:
            yield from _leaves(value)
    else:
        yield str(errors), getattr(errors, "code", None)


def status_of(codes: list) -> int:
    """404 or 409 when every error says so (all the same), else 400."""
    found = {_STATUS.get(code, status.HTTP_400_BAD_REQUEST) for code in codes}
    return found.pop() if len(found) == 1 else status.HTTP_400_BAD_REQUEST


def _body(errors, code: int):
    body = dict(errors) if isinstance(errors, dict) else {"detail": errors if isinstance(errors, str) else list(errors)}
    if code != status.HTTP_400_BAD_REQUEST and not isinstance(body.get("detail"), str):
        body["detail"] = next(_leaves(errors))[0]
    return body


def refusal(errors) -> Response:
    """The answer to DRF's ``serializer.errors``: 400, or 404 / 409 when every error's code says so."""
    code = status_of([c for _, c in _leaves(errors)] or [None])
    return Response(_body(errors, code), status=code)


def django_refusal(exc: DjangoValidationError, code: int | None = None) -> Response:
    """The answer to a service's ``ValidationError``: its fields (or ``detail``) with their
    messages; 400, or 404 / 409 when every error's code says so (``code`` forces one)."""
    if hasattr(exc, "error_dict"):
        errors = {name: [m for e in items for m in e.messages] for name, items in exc.error_dict.items()}
        codes = [e.code for items in exc.error_dict.values() for e in items]
    else:
        errors = {"detail": "; ".join(exc.messages)}
        codes = [e.code for e in exc.error_list]
    code = code or status_of(codes)
    return Response(_body(errors, code), status=code)


def exception_handler(exc, context):
    """DRF's handler, with a serializer's refusal given 404 / 409 by its errors' codes."""
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        code = status_of([c for _, c in _leaves(exc.detail)] or [None])
        if code != response.status_code:
            response.status_code = code
            response.data = _body(response.data, code)
    return response
