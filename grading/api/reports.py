"""Every report the registry declares (``grading.reports.registry``) as a read endpoint:
``GET /api/projects/{slug}/reports/{key}/`` with the report's parameters as query parameters
(``a``, ``b``, ``source``, ``cannot_assess``, ``models``, ``ci=true``...), answered with exactly
the JSON its command prints with ``--json``.

The result is background work (issue 26, point 3; ``grading.reports.background``): a result
already computed — by an earlier request, the report's page or its command, all sharing one cache
entry — answers 200; otherwise one computation is queued for identical requests, which answer 202
with ``{"status": "pending", "status_url", "since"}`` and the status URL in ``Location``
(``/api/projects/{slug}/reports/status/{token}/``, the request signed into its token). The status
URL answers 202 until the result is there, then 200 with it, or why the computation ended without
one. Under eager Celery (the tests) the first request answers at once. A report that is not cached
(the adjudication queue, a live reading) is computed in the request; when what it reads must first be
prepared by a worker (``Report.prepares``: the queue's whole count, when nothing kept can be brought
up to date, e.g. after an import), it answers 202 the same way until that is done.

The endpoint parses the parameters with the report's own schema and computes with its compute
function (``Report.run``), as the command does, so options, defaults, errors and results cannot drift
from the command line; what only makes sense on one machine (``--pairs FILE``) is the command's
alone. Sources must be the project's own (a prefix naming another project is refused without
looking it up). Each parameter is documented in the OpenAPI schema from its field in the report's
schema (``parameter_schema``: type, range, length, choices, pattern), so what the schema allows
is what the endpoint takes; a source naming no cohort or judge of the project is a 404 (so is
any other name of something the project does not have, a criterion: ``LookupError``), a report
the project's data cannot give (no attributed judges for a bias matrix...) a 409.
"""
import re
import time
from datetime import datetime, timezone

from django.core import signing
from django.core.validators import RegexValidator
from django.urls import path, reverse
from drf_spectacular.drainage import get_override
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from jsonschema import Draft4Validator
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.models import Response
from evalsite.api_errors import refusal
from evalsite.api_schema import text_schema
from evalsite.throttling import UserRateThrottle
from grading.reports.background import report_state
from grading.reports.registry import (
    Flag,
    Params,
    RegistryRoutes,
    Report,
    ReportPreparing,
    ReportUnavailable,
    SourceField,
    computed_reports,
    report_get,
)
from grading.reports.subset import subset_parse, subset_summary

from .common import responses

# What the ``ci`` switch (a Flag) reads as true, for the throttle to count exactly the interval requests.
TRUE = {str(v).lower() for v in serializers.BooleanField.TRUE_VALUES}
MAX_VALUE = 2000
SUBSET_HELP = {"models": "only these source models (comma-separated)",
               "exclude_models": "leave these source models out (comma-separated)"}
CI_HELP = "add a bootstrap 95% interval (resampling cases, seeded) to every mean"


def report_options(report: Report) -> dict[str, serializers.Field]:
    """The report's query parameters and their fields (its schema, and the subset and ``ci``)."""
    options = {name: f for name, f in report.params().fields.items() if name not in report.params.command_only}
    if report.subset:
        options.update({name: serializers.CharField(required=False, help_text=text) for name, text in SUBSET_HELP.items()})
    if report.intervals:
        options["ci"] = Flag(required=False, help_text=CI_HELP)
    return options


def parameter_schema(f: serializers.Field) -> dict:
    """What a query parameter's field takes, as a JSON Schema: the schema its class declares
    (``extend_schema_field``: a Flag, a source, a strategy), or its type with the field's range,
    length and choices; text refuses NUL characters (and blanks, when the field does) and is at
    most ``MAX_VALUE`` characters, as ``ReportApi`` checks."""
    declared = f.json_schema() if isinstance(f, SourceField) else get_override(f, "field")
    if isinstance(declared, dict):
        schema = dict(declared)
    elif isinstance(f, serializers.ChoiceField):
        schema = {"type": "string", "enum": [str(c) for c in f.choices] + ([""] if f.allow_blank else [])}
    elif isinstance(f, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(f, (serializers.IntegerField, serializers.FloatField)):
        schema = {"type": "integer" if isinstance(f, serializers.IntegerField) else "number"}
        schema.update({key: limit for key, limit in (("minimum", f.min_value), ("maximum", f.max_value)) if limit is not None})
        if getattr(f, "exclusive_minimum", False):
            schema["exclusiveMinimum"] = True
    else:
        schema = {"type": "string"}
        patterns = [v.regex.pattern for v in f.validators if isinstance(v, RegexValidator) and not v.inverse_match]
        if patterns:
            schema["pattern"] = patterns[0]
        schema.update({key: limit for key, limit in (("minLength", getattr(f, "min_length", None)),
                                                    ("maxLength", getattr(f, "max_length", None))) if limit is not None})
        if isinstance(f, serializers.CharField):
            text_schema(f, schema)
    if schema.get("type") == "string" and "enum" not in schema:
        schema["maxLength"] = min(schema.get("maxLength", MAX_VALUE), MAX_VALUE)
    return schema


def _parameter(name: str, f: serializers.Field) -> OpenApiParameter:
    described = str(f.help_text or "") + (" (a source of this project)" if isinstance(f, SourceField) else "")
    return OpenApiParameter(name, parameter_schema(f), required=bool(f.required), description=described)


def report_parameters(report: Report) -> list[OpenApiParameter]:
    """The report's query parameters; a group given together (``Params.together``) is one object
    whose properties are the query parameters (``style: form``, exploded), with its required ones."""
    options = report_options(report)
    grouped = []
    for group, (required, optional) in report.params.together.items():
        properties = {name: {**parameter_schema(options[name]), "description": str(options[name].help_text or "")}
                      for name in required + optional}
        grouped.append(OpenApiParameter(
            group.replace(" ", "_"), {"type": "object", "properties": properties, "required": list(required),
                                      "additionalProperties": False},
            style="form", explode=True, description=f"{group}: {', '.join(required)} together ({', '.join(optional)} optional)"))
        for name in required + optional:
            options.pop(name)
    return [_parameter(name, f) for name, f in sorted(options.items())] + grouped


class ReportIntervalThrottle(UserRateThrottle):
    """Report requests with bootstrap intervals (``ci=true``) per user: each may cost seconds of CPU
    inside the request on a large project (``API_REPORT_INTERVALS_RATE``, default 30 an hour)."""
    scope = "report_intervals"

    def allow_request(self, request, view) -> bool:
        if str(request.query_params.get("ci", "")).lower() not in TRUE:
            return True
        return super().allow_request(request, view)


ERROR_STATUS = {"unavailable": status.HTTP_409_CONFLICT, "missing": status.HTTP_404_NOT_FOUND,
                "invalid": status.HTTP_400_BAD_REQUEST, "failed": status.HTTP_500_INTERNAL_SERVER_ERROR}


class ReportPendingOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=["pending"])
    status_url = serializers.URLField(help_text="GET it until it answers 200 with the result (or the error)")
    since = serializers.DateTimeField(help_text="when the computation was queued")


def _detail(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__


STATUS_SALT = "evalsite.report-status"
TOKEN_PATTERN = r"^[A-Za-z0-9_.:-]{1,8000}$"


def report_status_token(*, project, report: Report, query: dict) -> str:
    """The status URL's token of a report request: its project, report and parameter texts, signed
    (so the URL needs nothing stored and cannot be made up) without a time in it, so identical
    requests get one token whenever they are made."""
    return signing.Signer(salt=STATUS_SALT).sign_object([project.pk, report.key, sorted(query.items())], compress=True)


def _status_request(token: str) -> tuple[int, str, dict] | None:
    """(project id, report key, parameter texts) of a status token, or None for no token of ours
    (a token signed with a time, as status URLs handed out before were, is still read)."""
    # The timed reader first: the plain one would take a timed token's time for part of its payload.
    for read in (lambda t: signing.loads(t, salt=STATUS_SALT), signing.Signer(salt=STATUS_SALT).unsign_object):
        try:
            project_id, key, items = read(token)
            return int(project_id), str(key), {str(name): str(value) for name, value in items}
        except (signing.BadSignature, TypeError, ValueError):
            continue
    return None


def _pending(request, project, report: Report, query: dict, since: float) -> ApiResponse:
    """202: the result is being computed; its status URL (named by the request, so identical requests
    share it) carries the request's parameters and answers with the result when it is there."""
    token = report_status_token(project=project, report=report, query=query)
    url = request.build_absolute_uri(reverse("api-report-status", kwargs={"slug": project.slug, "token": token}))
    body = {"status": "pending", "status_url": url,
            "since": datetime.fromtimestamp(since, tz=timezone.utc).isoformat().replace("+00:00", "Z")}
    return ApiResponse(body, status=status.HTTP_202_ACCEPTED, headers={"Location": url, "Retry-After": "2"})


def report_answer(request, *, report: Report, project, query: dict) -> ApiResponse:
    """The answer to a report request whose parameter texts are ``query`` (the report's URL or its
    status URL): 400/404 for parameters its schema refuses, then the result (200), 202 while it
    is computed in the background (``background.report_state``: one computation for identical
    requests, shared with the report's page builders and its command), or why its computation
    ended without one (409, 404, 400; 500 with the failure's words for a fault of the code)."""
    parsed = report_query(report)(data=query, context={"project": project, "local_only": True})
    if not parsed.is_valid():
        return refusal(parsed.errors)  # 400; 404 for a source the project does not have
    params = dict(parsed.validated_data)
    ci = bool(params.pop("ci", False))
    try:
        subset = subset_parse(params.pop("models", None), params.pop("exclude_models", None))
    except ValueError as exc:
        return ApiResponse({"models": [_detail(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    if not report.cached:  # a live reading (the adjudication queue): computed in the request, as it is cheap
        try:
            result = report.run(project=project, ci=ci, background=True, **params)
        except ReportPreparing as exc:  # what it reads is being prepared by a worker (or that failed)
            if exc.error is not None:
                return ApiResponse({"detail": exc.error}, status=ERROR_STATUS["failed"])
            return _pending(request, project, report, query, exc.since or time.time())
        except (KeyError, IndexError):
            raise  # a fault of the code, not of the request
        except (ValueError, LookupError) as exc:
            kind = "unavailable" if isinstance(exc, ReportUnavailable) else "invalid" if isinstance(exc, ValueError) else "missing"
            return ApiResponse({"detail": _detail(exc)}, status=ERROR_STATUS[kind])
    else:
        data = {name: query[name] for name in report.params().fields if name in query}  # what the task parses again
        state = report_state(report=report, project=project, params=params, data=data, ci=ci, subset=subset)
        if state.error is not None:
            return ApiResponse({"detail": state.error["detail"]}, status=ERROR_STATUS[state.error["kind"]])
        if state.result is None:
            return _pending(request, project, report, query, state.since)
        result = state.result
    result = report.printed(result, {**params, "ci": ci})
    if subset is not None:
        present = Response.objects.filter(project=project).values_list("model", flat=True).distinct()
        result = {**result, "model_subset": subset_summary(subset, present)}
    return ApiResponse(result)


PENDING = OpenApiResponse(ReportPendingOutput, description="the result is being computed: GET the status URL (Location)")
PENDING_HEADERS = [
    OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER, response=[202], description="the status URL"),
    OpenApiParameter("Retry-After", OpenApiTypes.INT, OpenApiParameter.HEADER, response=[202],
                     description="seconds to wait before asking the status URL"),
]


class ReportApi(APIView):
    report: Report
    throttle_classes = [*APIView.throttle_classes, ReportIntervalThrottle]

    def get(self, request, slug: str):
        report = self.report
        project = project_get_for(user=request.user, action=report.action, slug=slug)
        options = report_options(report)
        unknown = sorted(set(request.query_params) - set(options) - {"format"})
        if unknown:
            return ApiResponse({unknown[0]: [f"unknown parameter; {report.key} takes {', '.join(sorted(options)) or 'none'}"]},
                               status=status.HTTP_400_BAD_REQUEST)
        for name, value in request.query_params.items():
            if len(value) > MAX_VALUE:
                return ApiResponse({name: [f"at most {MAX_VALUE} characters"]}, status=status.HTTP_400_BAD_REQUEST)
            if value == "" and not Draft4Validator(parameter_schema(options[name])).is_valid(""):
                # DRF reads an empty value of a nullable field as none given; the schema does not allow it
                return ApiResponse({name: ["give a value, or leave the parameter out"]}, status=status.HTTP_400_BAD_REQUEST)
        query = {name: value for name, value in request.query_params.items() if name != "format"}
        return report_answer(request, report=report, project=project, query=query)


class ReportStatusApi(APIView):
    """The status URL of a report request answered 202: 202 while its result is computed, then the
    answer the report's URL gives (the result, or why there is none). Not counted by the interval
    throttle: the request that queued the computation was. If the project's data changed meanwhile,
    it answers for the data as it is now (queuing its computation once)."""

    @extend_schema(
        operation_id="report_status", summary="A report request answered 202: its result when it is there",
        parameters=[OpenApiParameter("token", {"type": "string", "pattern": TOKEN_PATTERN}, OpenApiParameter.PATH,
                                     description="from the status_url of the 202 answer"), *PENDING_HEADERS],
        responses=responses({200: OpenApiTypes.OBJECT, 202: PENDING}, {
            409: OpenApiResponse(OpenApiTypes.OBJECT, description="the project's data cannot give this report as asked")}),
    )
    def get(self, request, slug: str, token: str):
        asked = _status_request(token) if re.fullmatch(TOKEN_PATTERN, token) else None
        try:
            report = report_get(asked[1]) if asked else None
        except LookupError:
            report = None  # a report unregistered since
        if report is None:
            return ApiResponse({"detail": "no such report request"}, status=status.HTTP_404_NOT_FOUND)
        project = project_get_for(user=request.user, action=report.action, slug=slug)
        if project.pk != asked[0]:
            return ApiResponse({"detail": "no such report request in this project"}, status=status.HTTP_404_NOT_FOUND)
        return report_answer(request, report=report, project=project, query=asked[2])


def report_query(report: Report) -> type[Params]:
    """The report's schema with the query parameters every report takes (the subset, ``ci``)."""
    extra = {name: serializers.CharField(required=False, allow_null=True, default=None) for name in SUBSET_HELP} \
        if report.subset else {}
    if report.intervals:
        extra["ci"] = Flag()
    extra.update(dict.fromkeys(report.params.command_only))  # a field set to None is not the subclass's
    return type(f"{report.params.__name__}Query", (report.params,), extra)


_VIEWS: dict[int, object] = {}


def report_view(report: Report):
    """The view of one report, its parameters documented from the report's schema."""
    if id(report) in _VIEWS:
        return _VIEWS[id(report)]

    def get(self, request, slug: str):  # a function of its own: the schema is attached to it
        return ReportApi.get(self, request, slug)

    get = extend_schema(
        operation_id=f"report_{report.key}", summary=f"The {report.key} report (manage.py {report.key} --json)",
        description=report.help or report.title,
        parameters=[*report_parameters(report), *PENDING_HEADERS] if report.cached or report.prepares
        else report_parameters(report),
        responses=responses({200: OpenApiTypes.OBJECT, **({202: PENDING} if report.cached or report.prepares else {})}, {
            400: OpenApiTypes.OBJECT, 409: OpenApiResponse(
                OpenApiTypes.OBJECT, description="the project's data cannot give this report as asked (detail says why)")}),
    )(get)
    view = type(f"{report.key.title().replace('_', '')}ReportApi", (ReportApi,), {"report": report, "get": get})
    _VIEWS[id(report)] = view.as_view()
    return _VIEWS[id(report)]


def _routes() -> list:
    return [path(f"{report.key}/", report_view(report), name=f"api-report-{report.key.replace('_', '-')}")
            for report in computed_reports()] + [
        path("status/<str:token>/", ReportStatusApi.as_view(), name="api-report-status")]


# Under ``projects/<slug>/reports/`` (``grading.api.urls``): one route per report, read from the registry.
urlpatterns = RegistryRoutes(_routes)
