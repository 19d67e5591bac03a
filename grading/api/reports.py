"""Every report command of SPEC §5 as a read endpoint: ``GET /api/projects/{slug}/reports/{command}/``
with the command's own options as query parameters (``a``, ``b``, ``source``, ``cannot_assess``,
``models``, ``ci=true``...), answered with exactly the JSON the command prints with ``--json``.

The endpoint runs the command itself (``call_command``), so options, defaults, errors and results
cannot drift from the command line; what only makes sense on one machine (``--pairs FILE``) and
Django's own options are not offered. Sources must be the project's own (a prefix naming another
project is refused without looking it up). Each parameter is documented in the OpenAPI schema
from the command's parser.
"""
import argparse
import io
import json

from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response as ApiResponse
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from annotation.access import project_get_for

from ..sources import source_parse
from .common import responses

# command -> the project action it needs (annotation.access)
REPORTS = {
    "agreement": "view", "reliability": "view", "reliability_report": "view", "pairwise_agreement": "view",
    "coverage": "view", "calibrate_k": "view", "scores": "view", "cross_grader": "view", "verbosity": "view",
    "bias_matrix": "view", "stability": "view", "trait_scores": "view", "adjudication_queue": "adjudicate",
}
SOURCE_OPTIONS = {"a", "b", "source", "reference", "grader"}
NOT_OVER_HTTP = {"project", "json", "pairs", "help", "version", "verbosity", "settings", "pythonpath", "traceback",
                 "no_color", "force_color", "skip_checks"}
TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}
MAX_VALUE = 2000


def report_options(command: str) -> dict[str, argparse.Action]:
    """The command's options offered over HTTP, by query parameter name (the option's dest)."""
    parser = load_command_class("grading", command).create_parser("manage.py", command)
    return {a.dest: a for a in parser._actions if a.option_strings and a.dest not in NOT_OVER_HTTP}


def _parameter(name: str, action: argparse.Action) -> OpenApiParameter:
    flag = action.nargs == 0
    kind = bool if flag else int if action.type is int else float if action.type is float else str
    described = (action.help or "").replace("%%", "%") + (" (a source of this project)" if name in SOURCE_OPTIONS else "")
    return OpenApiParameter(name, kind, required=bool(action.required), enum=list(action.choices) if action.choices else None,
                            description=described)


class ReportIntervalThrottle(UserRateThrottle):
    """Report requests with bootstrap intervals (``ci=true``) per user: each may cost seconds of CPU
    inside the request on a large project (``API_REPORT_INTERVALS_RATE``, default 30 an hour)."""
    scope = "report_intervals"

    def allow_request(self, request, view) -> bool:
        if str(request.query_params.get("ci", "")).lower() not in TRUE:
            return True
        return super().allow_request(request, view)


class ReportApi(APIView):
    command = ""
    throttle_classes = [*APIView.throttle_classes, ReportIntervalThrottle]

    def get(self, request, slug: str):
        project = project_get_for(user=request.user, action=REPORTS[self.command], slug=slug)
        options = report_options(self.command)
        unknown = sorted(set(request.query_params) - set(options) - {"format"})
        if unknown:
            return ApiResponse({unknown[0]: [f"unknown parameter; {self.command} takes {', '.join(sorted(options)) or 'none'}"]},
                               status=status.HTTP_400_BAD_REQUEST)
        argv = [f"--project={project.slug}"]
        for name, value in request.query_params.items():
            action = options[name]
            if len(value) > MAX_VALUE:
                return ApiResponse({name: [f"at most {MAX_VALUE} characters"]}, status=status.HTTP_400_BAD_REQUEST)
            if action.nargs == 0:
                if value.lower() not in TRUE | FALSE:
                    return ApiResponse({name: [f"{value!r} is not true or false"]}, status=status.HTTP_400_BAD_REQUEST)
                if value.lower() in TRUE:
                    argv.append(action.option_strings[-1])
                continue
            if name in SOURCE_OPTIONS:
                try:
                    source_parse(text=value, project=project, local_only=True)
                except (ValueError, LookupError) as exc:
                    return ApiResponse({name: [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
            argv.append(f"{action.option_strings[-1]}={value}")  # one token: a value can never become an option
        out = io.StringIO()
        try:
            call_command(self.command, *argv, "--json", stdout=out, stderr=io.StringIO())
        except CommandError as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return ApiResponse(json.loads(out.getvalue()))


def report_view(command: str):
    """The view class of one report command, its parameters documented from the command's parser."""
    options = report_options(command)
    help_text = load_command_class("grading", command).help

    def get(self, request, slug: str):  # a function of its own: the schema is attached to it
        return ReportApi.get(self, request, slug)

    get = extend_schema(
        operation_id=f"report_{command}", summary=f"The {command} report (manage.py {command} --json)", description=help_text,
        parameters=[_parameter(name, action) for name, action in sorted(options.items())],
        responses=responses(OpenApiTypes.OBJECT, {400: OpenApiTypes.OBJECT}),
    )(get)
    view = type(f"{command.title().replace('_', '')}ReportApi", (ReportApi,), {"command": command, "get": get})
    return view.as_view()
