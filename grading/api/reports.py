"""Every report the registry declares (``grading.reports.registry``) as a read endpoint:
``GET /api/projects/{slug}/reports/{key}/`` with the report's parameters as query parameters
(``a``, ``b``, ``source``, ``cannot_assess``, ``models``, ``ci=true``...), answered with exactly
the JSON its command prints with ``--json``.

The endpoint parses the parameters with the report's own schema and calls its compute function
(``Report.run``), as the command does, so options, defaults, errors and results cannot drift
from the command line; what only makes sense on one machine (``--pairs FILE``) is the command's
alone. Sources must be the project's own (a prefix naming another project is refused without
looking it up). Each parameter is documented in the OpenAPI schema from its field in the report's
schema (``parameter_schema``: type, range, length, choices, pattern), so what the schema allows
is what the endpoint takes; a source naming no cohort or judge of the project is a 404 (so is
any other name of something the project does not have, a criterion: ``LookupError``), a report
the project's data cannot give (no attributed judges for a bias matrix...) a 409.
"""
from django.core.validators import RegexValidator
from django.urls import path
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
from grading.reports.registry import Flag, Params, RegistryRoutes, Report, ReportUnavailable, SourceField, computed_reports
from grading.reports.subset import model_subset, subset_parse, subset_summary

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


class ReportApi(APIView):
    report: Report
    query: type[Params]
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
        parsed = self.query(data=request.query_params, context={"project": project, "local_only": True})
        if not parsed.is_valid():
            return refusal(parsed.errors)  # 400; 404 for a source the project does not have
        params = dict(parsed.validated_data)
        ci = bool(params.pop("ci", False))
        subset = subset_parse(params.pop("models", None), params.pop("exclude_models", None))
        try:
            with model_subset(subset):
                result = report.printed(report.run(project=project, ci=ci, **params), {**params, "ci": ci})
        except ReportUnavailable as exc:
            return ApiResponse({"detail": str(exc).splitlines()[0]}, status=status.HTTP_409_CONFLICT)
        except (KeyError, IndexError):
            raise  # a fault of the code, not of the request
        except LookupError as exc:  # the request names something the project does not have (a criterion...)
            return ApiResponse({"detail": str(exc).splitlines()[0]}, status=status.HTTP_404_NOT_FOUND)
        except (ValueError, LookupError) as exc:
            return ApiResponse({"detail": str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__},
                               status=status.HTTP_400_BAD_REQUEST)
        if subset is not None:
            present = Response.objects.filter(project=project).values_list("model", flat=True).distinct()
            result = {**result, "model_subset": subset_summary(subset, present)}
        return ApiResponse(result)


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
        parameters=report_parameters(report),
        responses=responses(OpenApiTypes.OBJECT, {400: OpenApiTypes.OBJECT, 409: OpenApiResponse(
            OpenApiTypes.OBJECT, description="the project's data cannot give this report as asked (detail says why)")}),
    )(get)
    view = type(f"{report.key.title().replace('_', '')}ReportApi", (ReportApi,), {"report": report, "query": report_query(report),
                                                                                "get": get})
    _VIEWS[id(report)] = view.as_view()
    return _VIEWS[id(report)]


def _routes() -> list:
    return [path(f"{report.key}/", report_view(report), name=f"api-report-{report.key.replace('_', '-')}")
            for report in computed_reports()]


# Under ``projects/<slug>/reports/`` (``grading.api.urls``): one route per report, read from the registry.
urlpatterns = RegistryRoutes(_routes)
