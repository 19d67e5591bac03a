"""Judges (managers: create, read, change, delete; every change audited by ``judge_save`` /
``judge_delete``), their runs (start, stop, resume, progress) and their judgments (read by
adjudicators and managers, filtered)."""
import django_filters
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.vocabulary import VERDICTS
from evalsite.api_filters import StrictFilterSet
from evalsite.api_inputs import JsonInput
from evalsite.converters import ID_MAX

from ..judges import services
from ..judges.backends import backend_for, backend_get, backend_names
from ..judges.endpoints import endpoint_schema
from ..judges.selectors import run_get_for_manager
from ..judges.settings import RUBRIC_VARIANTS, SettingsError, settings_schema_check
from ..models import Judge, JudgeRun, Judgment, PromptTemplate
from .common import (
    CONFLICT_ANSWER,
    IdFilter,
    MoneyField,
    StrictBooleanFilter,
    conflict,
    not_found,
    responses,
    validation_error,
    write_responses,
)
from .projects import _ProjectList

MONEY = {"max_digits": 10, "decimal_places": 4}


class JudgeOutput(serializers.ModelSerializer):
    prompt_template = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)

    class Meta:
        model = Judge
        fields = ["id", "name", "backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples",
                  "concurrency", "max_retries", "price_in_per_mtok", "price_out_per_mtok", "settings", "prompt_template",
                  "created_at"]
        extra_kwargs = {"price_in_per_mtok": {"coerce_to_string": False}, "price_out_per_mtok": {"coerce_to_string": False}}


class RangedPrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """An id checked against its ``pk_field``'s range before the lookup: out of range is a 400
    naming it; in range and not there, DRF's ``does_not_exist`` (a 404, ``evalsite.api_errors``)."""

    def to_internal_value(self, data):
        self.pk_field.run_validation(data)
        return super().to_internal_value(data)


class JudgeSettingsField(serializers.DictField):
    """A judge's ``settings`` for one backend: checked against the backend's JSON Schema
    (``JudgeBackend.settings_schema``), which is also what the API's schema states for it."""

    def __init__(self, *, backend, **kwargs):
        self.backend = backend
        super().__init__(**kwargs)

    def json_schema(self) -> dict:
        return self.backend.settings_schema()

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            settings_schema_check(self.json_schema(), value)
        except SettingsError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value


class JudgeInput(JsonInput):
    """A judge's configuration; ``settings`` is the JSON of SPEC §7 (json_mode, timeouts, few-shot,
    rate limits, panel members...), checked by the same rules as the judges page. Each configurable
    backend has its own subclass (``judge_input_classes``): its settings' schema, whether it needs a
    model, the endpoints and key variables it may name; the API's schema states them as one of
    these bodies, told apart by ``backend``."""
    judge_backend = None  # the subclass's backend
    name = serializers.CharField(max_length=100)
    backend = serializers.ChoiceField(choices=[], help_text="A configurable judge backend: openai, baseline or panel.")
    model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    base_url = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    api_key_env = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    condition = serializers.ChoiceField(choices=Judge.CONDITIONS, default=Judge.ANONYMIZED)
    temperature = serializers.FloatField(min_value=0, max_value=2, default=0.0)
    samples = serializers.IntegerField(min_value=1, max_value=100, default=1)
    concurrency = serializers.IntegerField(min_value=1, max_value=256, default=8)
    max_retries = serializers.IntegerField(min_value=0, max_value=20, default=3)
    price_in_per_mtok = MoneyField(**MONEY, default=0)
    price_out_per_mtok = MoneyField(**MONEY, default=0)
    settings = serializers.DictField(required=False, default=dict)
    prompt_template = RangedPrimaryKeyField(
        queryset=PromptTemplate.objects.all(), required=False, allow_null=True,
        pk_field=serializers.IntegerField(min_value=1, max_value=ID_MAX))  # checked before the query: no overflow

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        backend = self.judge_backend
        self.fields["backend"].choices = [backend.name] if backend else backend_names(configurable=True)
        if backend is None:
            return
        needed = bool(backend.settings_schema().get("required"))  # a panel's members
        self.fields["settings"] = JudgeSettingsField(backend=backend, **({} if needed else {"required": False, "default": dict}))
        if backend.needs_model:
            self.fields["model"] = serializers.CharField(max_length=200, help_text=f"required by {backend.label}")

    def json_schema_extra(self, schema: dict) -> None:
        """The pairs of base URL and key variable the deployment allows (``endpoint_schema``)."""
        if self.judge_backend is None:
            return
        rule = endpoint_schema(calls_out=self.judge_backend.calls_out)
        for name, extra in rule.pop("properties").items():
            schema["properties"][name] = {**schema["properties"][name], **extra}
            schema["properties"][name].pop("pattern", None)  # the enum says it all
        schema.update(rule)
        if self.partial:
            # A change names the backend, and with it what that backend reads (its settings, a model):
            # the judge's stored values may be another backend's.
            needed = {name for name, f in type(self)().fields.items() if f.required} - {"name"}
            schema["required"] = sorted({*schema.get("required", []), *needed, "backend", "settings"})


def judge_input_classes() -> dict[str, type[JudgeInput]]:
    """The request body of each configurable backend, by its name (the registry's, as of now)."""
    return {name: type(f"{name.title().replace('_', '')}JudgeInput", (JudgeInput,), {"judge_backend": backend_get(name)})
            for name in backend_names(configurable=True)}


def judge_input(data, *, judge: Judge | None = None) -> JudgeInput:
    """The serializer of a request body: its ``backend``'s (on a change, the judge's when the body
    does not name one); a backend that is not configurable is refused by the base class."""
    name = data.get("backend") if isinstance(data, dict) else None
    cls = judge_input_classes().get(name if name is not None or judge is None else judge.backend, JudgeInput)
    return cls(data=data, partial=judge is not None)


def judge_request(*, partial: bool) -> PolymorphicProxySerializer:
    return PolymorphicProxySerializer(
        component_name="JudgeInput", resource_type_field_name="backend",
        serializers={name: cls(partial=partial) for name, cls in judge_input_classes().items()})


class JudgeListApi(_ProjectList):
    action_needed = "manage"
    serializer_class = JudgeOutput

    def project_queryset(self, project):
        return Judge.objects.filter(project=project).order_by("name", "id")

    @extend_schema(responses=responses(JudgeOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=judge_request(partial=False), responses=write_responses({201: JudgeOutput}, CONFLICT_ANSWER))
    def post(self, request, slug: str):
        project = self.project()
        data = judge_input(request.data)
        data.is_valid(raise_exception=True)
        if Judge.objects.filter(project=project, name=data.validated_data["name"]).exists():
            return conflict("name", f"a judge {data.validated_data['name']!r} exists in this project")
        judge = Judge(project=project, **data.validated_data)
        try:
            services.judge_save(judge=judge, by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(JudgeOutput(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetailApi(APIView):
    def _judge(self, request, slug, judge_id) -> Judge:
        project = project_get_for(user=request.user, action="manage", slug=slug)
        return get_object_or_404(Judge, pk=judge_id, project=project)

    @extend_schema(responses=responses(JudgeOutput))
    def get(self, request, slug: str, judge_id: int):
        return ApiResponse(JudgeOutput(self._judge(request, slug, judge_id)).data)

    @extend_schema(request=judge_request(partial=True), responses=write_responses(JudgeOutput, CONFLICT_ANSWER))
    def patch(self, request, slug: str, judge_id: int):
        """Change some fields of an LLM judge, the baseline or a panel (imported judges are data)."""
        judge = self._judge(request, slug, judge_id)
        if not backend_for(judge).configurable:
            return conflict("backend", f"a {judge.backend} judge is data, not a configuration; it cannot be edited")
        data = judge_input(request.data, judge=judge)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "name" in values and Judge.objects.filter(project=judge.project, name=values["name"]).exclude(pk=judge.pk).exists():
            return conflict("name", f"a judge {values['name']!r} exists in this project")
        for field, value in values.items():
            setattr(judge, field, value)
        try:
            services.judge_save(judge=judge, by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(JudgeOutput(judge).data)

    @extend_schema(request=None, responses=responses({204: None}))
    def delete(self, request, slug: str, judge_id: int):
        """Delete a judge and its judgments (audited)."""
        services.judge_delete(judge=self._judge(request, slug, judge_id), by=request.user)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)


# --- runs -------------------------------------------------------------------------------------


class RunOutput(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")

    class Meta:
        model = JudgeRun
        fields = ["id", "judge", "status", "scope", "total_calls", "done_calls", "invalid_count", "cache_hits", "calls_made",
                  "retries", "failed_calls", "tokens_in", "tokens_out", "cost_usd", "budget_usd", "seconds", "error",
                  "created_at", "started_at", "finished_at"]
        extra_kwargs = {"cost_usd": {"coerce_to_string": False}, "budget_usd": {"coerce_to_string": False}}


def _ids():
    return serializers.ListField(child=serializers.CharField(max_length=200), required=False, max_length=100_000)


class ScopeInput(JsonInput):
    cases, models, criteria, responses = _ids(), _ids(), _ids(), _ids()
    # tests/api check these are plan.SCOPE_KEYS


class RunInput(JsonInput):
    judge = serializers.CharField(max_length=200, help_text="The judge's name.")
    scope = ScopeInput(required=False, help_text="A slice by case, model, criterion or response ids; empty: the project.")
    budget_usd = MoneyField(max_digits=12, decimal_places=4, required=False, allow_null=True)
    variant = serializers.ChoiceField(choices=RUBRIC_VARIANTS, required=False, allow_blank=True,
                                      help_text="Run on a rubric variant (NAME~variant): reversed or paraphrased.")


class ResumeInput(JsonInput):
    budget_usd = MoneyField(max_digits=12, decimal_places=4, required=False, allow_null=True)


class RunListApi(_ProjectList):
    action_needed = "manage"
    serializer_class = RunOutput

    def project_queryset(self, project):
        return JudgeRun.objects.filter(judge__project=project).select_related("judge").order_by("-id")

    @extend_schema(responses=responses(RunOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=RunInput, responses=write_responses({202: RunOutput}, CONFLICT_ANSWER))
    def post(self, request, slug: str):
        """Start a run of a judge on a worker; follow it at its URL (``/runs/{id}/``)."""
        project = self.project()
        data = RunInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        judge = Judge.objects.filter(project=project, name=d["judge"]).first()
        if judge is None:
            return not_found("judge", f"no judge {d['judge']!r} in this project")
        try:
            with transaction.atomic():
                if d.get("variant"):
                    judge = services.judge_variant(judge=judge, variant=d["variant"])
                run = services.judge_run_start(judge=judge, scope=dict(d.get("scope") or {}), user=request.user,
                                               budget_usd=d.get("budget_usd"))
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(RunOutput(run).data, status=status.HTTP_202_ACCEPTED,
                           headers={"Location": f"/api/projects/{project.slug}/runs/{run.pk}/"})


class RunDetailApi(APIView):
    @extend_schema(responses=responses(RunOutput))
    def get(self, request, slug: str, run_id: int):
        project = project_get_for(user=request.user, action="manage", slug=slug)
        return ApiResponse(RunOutput(run_get_for_manager(project=project, run_id=run_id, user=request.user)).data)


class RunStopApi(APIView):
    @extend_schema(request=None, responses=responses(RunOutput))
    def post(self, request, slug: str, run_id: int):
        """Stop a run: a queued one at once, a running one after its calls in flight."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        run = services.judge_run_stop(run=run_get_for_manager(project=project, run_id=run_id, user=request.user))
        return ApiResponse(RunOutput(run).data)


class RunResumeApi(APIView):
    @extend_schema(request=ResumeInput, responses=write_responses(RunOutput, CONFLICT_ANSWER))
    def post(self, request, slug: str, run_id: int):
        """Resume a stopped, failed, paused or stale run without repeating finished calls."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        run = run_get_for_manager(project=project, run_id=run_id, user=request.user)
        data = ResumeInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = services.judge_run_resume(run=run, budget_usd=data.validated_data.get("budget_usd"))
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(RunOutput(run).data)


# --- judgments ---------------------------------------------------------------------------------


class JudgmentOutput(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")
    response_id = serializers.CharField(source="response.external_id")
    criterion_id = serializers.CharField(source="criterion.external_id")
    verdict = serializers.ChoiceField(choices=VERDICTS, allow_null=True)
    option = serializers.CharField(source="option_label", allow_null=True)

    class Meta:
        model = Judgment
        fields = ["id", "judge", "run", "response_id", "criterion_id", "sample", "condition", "verdict", "option", "value",
                  "valid", "evidence_capped", "explanation", "evidence", "tokens_in", "tokens_out", "latency_ms", "cached"]


class JudgmentFilter(StrictFilterSet):
    judge = django_filters.CharFilter(field_name="judge__name")
    response_id = django_filters.CharFilter(field_name="response__external_id")
    criterion_id = django_filters.CharFilter(field_name="criterion__external_id")
    run = IdFilter(field_name="run_id")
    valid = StrictBooleanFilter()

    class Meta:
        model = Judgment
        fields = ["judge", "response_id", "criterion_id", "run", "valid"]


class JudgmentListApi(_ProjectList):
    action_needed = "inspect"
    serializer_class = JudgmentOutput
    filterset_class = JudgmentFilter

    def project_queryset(self, project):
        return (Judgment.objects.filter(judge__project=project)
                .select_related("judge", "response", "criterion").order_by("id"))
