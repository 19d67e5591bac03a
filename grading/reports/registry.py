"""The one place a report is declared (issue 23, point 1).

A report module (``grading/reports/<name>.py``) ends with ``register(Report(...))``: its key,
title, typed parameters (a DRF serializer: types, choices, defaults and help in one place), its
compute function, what its command prints and, when it has one, its page (``Page``: the page's
own parameters, builder, template and charts). Everything else is read from here: the
management command (``cli.report_command``), the page with its htmx partial and CSV
(``views.report_page``), the API endpoint and its OpenAPI parameters (``grading.api.reports``),
the cache key (``Report.run``), the role a reader needs, the report menu and the tests' lists.

Parameters are parsed once, at the edge, by the serializer: a source's text becomes its
``Source``; bad input is one clear message. Report modules are found by importing every module
of this package on first use (``_discover``), so nothing here names a report, and Django starts
without loading pandas.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evalsite.codes import NOT_FOUND
from evalsite.discovery import PackageModules
from grading.sources import Source, project_get, source_parse

from .cache import report_cached, report_key
from .subset import subset_summary

STRATEGIES = ("skip", "zero", "partial", "fail")
# What a report that takes no strategy may declare it does with cannot assess: one of the strategies,
# or "verdict" (it counts verdicts as they are, cannot assess being one of them).
FIXED_STRATEGIES = (*STRATEGIES, "verdict")
# What every report's result and printed JSON state, whatever its own output picks (``Report.run``).
STATED = ("cannot_assess_strategy", "left_out", "n_excluded_cases", "n_draft_labels")
# Modules of this package that declare no report (imported by discovery all the same, harmlessly).
NOT_REPORTS = {"registry", "views", "urls", "tasks", "cli", "glossary", "background"}


# --- typed parameters ----------------------------------------------------------------------

# A source of the request's project, as the schema states it (the API's sources are local): gold, or
# cohort: / judge: and a name with something other than white space (no NUL anywhere). A cohort or
# judge the project does not have is a 404 (code NOT_FOUND): existence is not the schema's to say.
def source_pattern(kinds=("cohort", "judge", "gold")) -> str:
    named = "|".join(k for k in kinds if k != "gold")
    forms = (["gold"] if "gold" in kinds else []) + ([rf"({named}):[^\u0000]*[^\s\u0000][^\u0000]*"] if named else [])
    return r"^\s*(" + "|".join(forms) + r")\s*$"


@extend_schema_field({"type": "string", "pattern": source_pattern()})
class SourceField(serializers.CharField):
    """A source's text (``cohort:NAME``, ``judge:NAME``, ``gold``, or for a command another
    project's ``SLUG:cohort:NAME``), parsed into its ``Source`` — or, with ``spec=True`` (a page's
    parameters, which travel to a Celery task), into its canonical text. The serializer's context
    holds the ``project`` and ``local_only`` (pages and the API: this project's sources only).
    A well-formed name of a cohort or judge that is not there is refused with the code NOT_FOUND."""

    def __init__(self, *, spec: bool = False, kinds: tuple = ("cohort", "judge", "gold"), wrong_kind: str = "", **kwargs):
        self.spec = spec
        self.kinds = kinds  # the kinds of source the report reads (pairwise: a cohort's annotators)
        self.wrong_kind = wrong_kind  # the refusal of another kind ({spec}, {kind}); default: the kinds it takes
        kwargs.setdefault("help_text", "a source: cohort:NAME, judge:NAME or gold")
        super().__init__(**kwargs)

    def json_schema(self) -> dict:
        """The schema of this field's sources (its kinds), for the report API's parameters."""
        return {"type": "string", "pattern": source_pattern(self.kinds)}

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        if not text:
            return None
        try:
            source = source_parse(text=text, project=self.context["project"], local_only=self.context.get("local_only", False))
        except LookupError as exc:
            raise serializers.ValidationError(str(exc).splitlines()[0], code=NOT_FOUND) from exc
        except ValueError as exc:
            raise serializers.ValidationError(str(exc).splitlines()[0]) from exc
        if source.kind not in self.kinds:
            raise serializers.ValidationError(self.wrong_kind.format(spec=source.spec, kind=source.kind) if self.wrong_kind
                                              else f"{source.spec} is a {source.kind} source; use {' or '.join(self.kinds)}")
        return source.spec if self.spec else source


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)


# What a Flag accepts in a query, stated in the schema (a JSON Schema pattern has no case flag).
FLAG_WORDS = sorted({str(v).lower() for v in (*serializers.BooleanField.TRUE_VALUES, *serializers.BooleanField.FALSE_VALUES)})
FLAG_SCHEMA = {"anyOf": [{"type": "boolean"}, {"type": "string", "pattern": "^(" + "|".join(
    _any_case(w) for w in FLAG_WORDS) + "|)$"}]}


@extend_schema_field(FLAG_SCHEMA)
class Flag(serializers.BooleanField):
    """A switch: true / false (1, yes, on / 0, no, off, in any case, or empty); the schema says so."""
    default_error_messages = {"invalid": "{input!r} is not true or false"}

    def __init__(self, **kwargs):
        kwargs.setdefault("default", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        return False if data == "" else super().to_internal_value(data)


@extend_schema_field({"type": "string", "enum": list(STRATEGIES)})
class StrategyField(serializers.CharField):
    """The cannot-assess strategy (SPEC §3), case and spaces forgiven (the schema names the plain words)."""

    def to_internal_value(self, data):
        name = super().to_internal_value(data).strip().lower()
        if name not in STRATEGIES:
            raise serializers.ValidationError(
                f"unknown cannot-assess strategy {data!r}; use one of {', '.join(STRATEGIES)}")
        return name


def choice(choices, *, what: str, **kwargs) -> serializers.ChoiceField:
    """A choice with the error every report gives: "unknown WHAT 'x'; use a, b or c"."""
    names = [str(c) for c in choices]
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
    return serializers.ChoiceField(choices=list(choices), error_messages={
        "invalid_choice": f"unknown {what} '{{input}}'; use {listed}"}, **kwargs)


class ReportUnavailable(ValueError):
    """The project's data cannot give this report as asked (no attributed judges for a bias
    matrix...): not a wrong parameter but a state of the project (the API answers 409)."""


class ReportPreparing(Exception):
    """A live report (``Report.prepares``) asked not to wait: what it reads is being prepared by
    a worker, queued at ``since`` (epoch seconds; the API answers 202 until it is there), or that
    failed (``error``, one line; the API answers 500 with it)."""

    def __init__(self, *, since: float | None = None, error: str | None = None):
        super().__init__(error or "being prepared in the background")
        self.since, self.error = since, error


class NumberField(serializers.FloatField):
    """A finite number (DRF's FloatField takes ``nan`` and ``inf``); with ``exclusive_minimum``,
    more than ``min_value`` (the API's schema says so: ``exclusiveMinimum``)."""

    def __init__(self, *, exclusive_minimum: bool = False, **kwargs):
        self.exclusive_minimum = exclusive_minimum
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            raise serializers.ValidationError(f"must be a finite number, not {data!r}")
        if self.exclusive_minimum and value <= self.min_value:
            raise serializers.ValidationError(f"must be more than {self.min_value:g}")
        return value


class Params(serializers.Serializer):
    """The base of every report's and page's parameters.

    ``command_only``: parameters only the command takes (the API's schema could not state what
    they take: a text whose parts must be ordered). ``together``: groups of parameters given all
    or none, as {group: (required names, optional names)}; the API's schema states each group as
    one object of query parameters (``style: form``, exploded) with its required names, and the
    schema's ``validate`` (``together_check``) refuses a group given in part."""
    command_only: tuple[str, ...] = ()
    together: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def together_check(self, attrs: dict) -> None:
        for group, (required, optional) in self.together.items():
            missing = [name for name in required if attrs.get(name) is None]
            if missing and any(attrs.get(name) is not None for name in required + optional):
                raise serializers.ValidationError({missing[0]: f"{group} is given by {', '.join(required)} together; "
                                                                f"{', '.join(missing)} missing"})


class NoParams(Params):
    pass


def _first_error(errors) -> str:
    if isinstance(errors, dict):
        for value in errors.values():
            return _first_error(value)
    if isinstance(errors, list) and errors:
        return _first_error(errors[0])
    return str(errors)


def params_parse(schema: type[Params], *, project, data: dict, local_only: bool = False) -> dict:
    """The validated parameters of ``data`` under ``schema``; ValueError with one line when bad."""
    parsed = schema(data=data, context={"project": project, "local_only": local_only})
    if not parsed.is_valid():
        raise ValueError(_first_error(parsed.errors))
    return dict(parsed.validated_data)


def params_errors(schema: type[Params], *, project, data, local_only: bool = True) -> tuple[dict | None, dict | None]:
    """(validated parameters, None) or (None, DRF's errors by field name)."""
    parsed = schema(data=data, context={"project": project, "local_only": local_only})
    if not parsed.is_valid():
        return None, {name: [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])]
                      for name, msgs in parsed.errors.items()}
    return dict(parsed.validated_data), None


# --- the declarations -----------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    """A report's page: ``/projects/SLUG/reports/KEY/`` with its htmx partial and CSV of every table.

    ``build(project=..., **params)`` returns plain data with ``tables`` (name → columns, rows);
    it runs in a Celery task and is cached. ``params`` are the page's query parameters; a switch
    (``Flag``) that is off, such as ``ci``, is left out so the default URL keeps one cache entry.
    ``template`` defaults to the generic one, which shows every table; ``charts(result, project)``
    returns the page's SVG charts by name."""
    params: type[Params]
    build: Callable[..., dict]
    template: str = "grading/reports/generic.html"
    charts: Callable | None = None
    # (result, project) -> {public id: database id} for the rows the page links to; read when the
    # page renders, never cached, exported or sent by the API (which name rows by public ids only)
    links: Callable | None = None
    key: str = ""
    title: str = ""
    position: int = 100  # place in the report menu

    def parse(self, *, project, data) -> dict:
        params = params_parse(self.params, project=project, data=data, local_only=True)
        fields = self.params().fields
        return {name: value for name, value in params.items()
                if not (isinstance(fields.get(name), Flag) and value is False and fields[name].default is False)}

    def default_params(self, *, project=None) -> dict:
        """The parameters of the page's URL without a query."""
        return self.parse(project=project, data={})


@dataclass(frozen=True)
class Report:
    """One report. ``compute(inputs=..., **params)`` returns its whole result (cached under the
    report's key, its parameters and the fingerprints of the projects it reads); ``output(result,
    params)`` the JSON its command prints and its API endpoint answers (default: the result).
    ``inputs_from`` names the source parameter whose project the report reads (a source of another
    project); ``intervals`` says whether ``ci`` (bootstrap 95% intervals) applies; ``subset``
    whether ``models`` / ``exclude_models`` do; ``counted`` whether the result says what was left
    out (``left_out``: drafts, cases quality control excluded, few-shot split cases, criteria a
    source does not decide); ``cannot_assess`` is the strategy a report without a ``strategy``
    parameter always applies (``FIXED_STRATEGIES``); ``action`` is the project
    action a reader needs (``annotation.access``). A report without ``compute`` is a page only.
    ``prepares``: a live report (not cached) whose ``compute`` takes ``background``: with it, what
    the report reads that would take long to prepare is left to a worker and ReportPreparing says
    so (the API's 202); without it (the command), it is prepared in the process.

    Whatever the report, its result and its printed JSON (command and API) name the cannot-assess
    strategy in use (``cannot_assess_strategy``) and, when counted, what was left out: added here,
    once (``stated``), not by each report."""
    key: str
    title: str
    params: type[Params] = NoParams
    compute: Callable[..., dict] | None = None
    output: Callable[[dict, dict], dict] | None = None
    help: str = ""
    inputs_from: str | None = None
    intervals: bool = True
    subset: bool = True
    counted: bool = True
    cached: bool = True
    prepares: bool = False
    cannot_assess: str = ""
    action: str = "view"
    page: Page | None = None

    def strategy_in_use(self, params: dict) -> str:
        """The cannot-assess strategy of a computation: its ``strategy`` parameter, else the report's own."""
        return str(params.get("strategy") or self.cannot_assess)

    def parse(self, *, project, data: dict, local_only: bool = False) -> dict:
        return params_parse(self.params, project=project, data=data, local_only=local_only)

    def run(self, *, project, inputs=None, ci: bool = False, background: bool = False, **params) -> dict:
        """The cached result for validated ``params`` (sources as ``Source``). ``background``: a
        report that ``prepares`` raises ReportPreparing rather than preparing its inputs here."""
        from .inputs import ReportInputs  # lazy: pandas loads on first use, not when Django starts

        project = project_get(slug=project) if isinstance(project, str) else project
        inputs = inputs or ReportInputs(project)
        if self.inputs_from and params.get(self.inputs_from) is not None:
            inputs = inputs.for_source(params[self.inputs_from])
        extra = {"ci": True} if ci else {}
        if background and self.prepares:
            extra["background"] = True

        def compute() -> dict:
            result = self.compute(inputs=inputs, **params, **extra)
            result = {**result, "cannot_assess_strategy": self.strategy_in_use(params)}
            if not self.counted:
                return result
            sources = [v for v in params.values() if isinstance(v, Source)]
            result.update(n_excluded_cases=inputs.n_excluded_cases, n_draft_labels=inputs.n_draft_labels,
                          left_out=inputs.left_out(sources))
            if inputs.subset is not None:
                result["model_subset"] = subset_summary(inputs.subset, inputs.all_models)
            return result

        if not self.cached:
            return compute()
        return report_cached(**self._cache_scope(project=project, ci=ci, params=params), compute=compute)

    def _cache_scope(self, *, project, ci: bool, params: dict) -> dict:
        """What ``run``'s cache entry is keyed by: the projects it reads, the report and its parameters."""
        sources = [v for v in params.values() if isinstance(v, Source)]
        projects = {p.pk: p for p in [project, *(s.project for s in sources)]}
        key_params = {name: (f"{v.project.slug}:{v.spec}" if isinstance(v, Source) else v) for name, v in params.items()}
        return {"projects": [projects[pk] for pk in sorted(projects)], "name": self.key,
                "params": {**key_params, **({"ci": True} if ci else {})}}

    def cache_key(self, *, project, ci: bool = False, **params) -> str | None:
        """The key of ``run``'s cached result for validated ``params`` under the active model subset,
        without computing anything (None for a report that is not cached): the page's builders, the
        API's background computations and the commands all read and write this one entry."""
        if not self.cached:
            return None
        project = project_get(slug=project) if isinstance(project, str) else project
        return report_key(**self._cache_scope(project=project, ci=ci, params=params))

    def answer(self, *, project, inputs=None, ci: bool = False, **data) -> dict:
        """The result for raw parameters as a command or a caller names them (texts)."""
        project = project_get(slug=project) if isinstance(project, str) else project
        params = self.parse(project=project, data=data)
        return self.run(project=project, inputs=inputs, ci=ci, **params)

    def printed(self, result: dict, params: dict) -> dict:
        """The JSON a command prints and the API answers: the report's output with what every
        report states (``STATED``) from its result."""
        out = self.output(result, params) if self.output else result
        return {**out, **{key: result[key] for key in STATED if key in result}}


_REPORTS: dict[str, Report] = {}
_version = 0  # changes with every registration: the routes made from the registry are made again


def register(report: Report) -> Report:
    """Add a report; a second one with the same key or page key is an error at import."""
    if report.key in _REPORTS and _REPORTS[report.key] is not report:
        raise ValueError(f"a report {report.key!r} is registered already")
    if report.compute is not None:
        takes_strategy = any(f.source == "strategy" or name == "strategy" for name, f in report.params().fields.items())
        if takes_strategy == bool(report.cannot_assess) or (report.cannot_assess and report.cannot_assess not in FIXED_STRATEGIES):
            raise ValueError(f"report {report.key!r}: name what it does with cannot assess (cannot_assess, one of "
                             f"{', '.join(FIXED_STRATEGIES)}) unless it takes a strategy parameter, and only then")
    if report.page is not None:
        page_key = report.page.key or report.key
        taken = [r.key for r in _REPORTS.values() if r.page and (r.page.key or r.key) == page_key and r.key != report.key]
        if taken:
            raise ValueError(f"report {taken[0]!r} has the page {page_key!r} already")
    global _version
    _REPORTS[report.key] = report
    _version += 1
    return report


def unregister(key: str) -> None:
    global _version
    _REPORTS.pop(key, None)
    _version += 1


_discover = PackageModules(__package__, skip=NOT_REPORTS).import_all  # each report module registers itself


def reports() -> list[Report]:
    """Every registered report, by key."""
    _discover()
    return [_REPORTS[key] for key in sorted(_REPORTS)]


def report_get(key: str) -> Report:
    _discover()
    if key not in _REPORTS:
        raise LookupError(f"unknown report {key!r}")
    return _REPORTS[key]


def computed_reports() -> list[Report]:
    """The reports with a command and an API endpoint."""
    return [r for r in reports() if r.compute is not None]


# What report computations import on first use, lazily so that web processes start without them
# (2.5 s and 160 MB on the 2-core bench machine, most of it scikit-learn).
COMPUTATION_LIBRARIES = ("numpy", "pandas", "scipy.stats", "sklearn.metrics", "sklearn.linear_model", "krippendorff")


def worker_preload() -> list[str]:
    """Load every report module and the libraries their computations import, once, in a worker
    before its pool starts (``evalsite.celery``): its pool processes then share them, and no report
    a researcher waits for spends its first seconds importing. Returns the libraries' names."""
    for name in COMPUTATION_LIBRARIES:
        importlib.import_module(name)
    reports()
    return list(COMPUTATION_LIBRARIES)


def page_key(report: Report) -> str:
    return report.page.key or report.key


def pages() -> list[tuple[str, Report]]:
    """(page key, report) of every report with a page, in menu order."""
    found = [(page_key(r), r) for r in reports() if r.page is not None]
    return sorted(found, key=lambda item: (item[1].page.position, item[0]))


def page_get(key: str) -> Report:
    for found, report in pages():
        if found == key:
            return report
    raise LookupError(f"unknown report page {key!r}")


def page_title(report: Report) -> str:
    return report.page.title or report.title


class RegistryRoutes:
    """URL patterns made from the registry (``build()``), made again when a report is registered or
    unregistered. Django reads an included URLconf's patterns by iterating them on every resolve,
    so a report registered after the URLconf was loaded is routed too (reversing its route's name
    needs ``django.urls.clear_url_caches``; links are built from the index URL instead)."""

    def __init__(self, build: Callable[[], list]):
        self.build = build
        self._built: tuple[int, list] | None = None

    def _patterns(self) -> list:
        if self._built is None or self._built[0] != _version:
            self._built = (_version, self.build())
        return self._built[1]

    def __iter__(self):
        return iter(self._patterns())

    def __len__(self) -> int:
        return len(self._patterns())

    def __getitem__(self, index):
        return self._patterns()[index]
