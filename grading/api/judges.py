"""Judges (managers: create, read, change, delete; every change audited by ``judge_save`` /
``judge_delete``), their runs (start, stop, resume, progress) and their judgments (read by
adjudicators and managers, filtered)."""
import django_filters
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for
from annotation.vocabulary import VERDICTS
from evalsite.converters import ID_MAX

from ..judges import services
from ..judges.backends import backend_for, backend_names
from ..judges.selectors import run_get_for_manager
from ..models import Judge, JudgeRun, Judgment, PromptTemplate
from .common import IdFilter, StrictBooleanFilter, responses, validation_error, write_responses
from .projects import _ProjectList

MONEY = {"max_digits": 10, "decimal_places": 4, "min_value": 0, "coerce_to_string": False}


class JudgeOutput(serializers.ModelSerializer):
    prompt_template = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)

    class Meta:
        model = Judge
        fields = ["id", "name", "backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples",
                  "concurrency", "max_retries", "price_in_per_mtok", "price_out_per_mtok", "settings", "prompt_template",
                  "created_at"]
        extra_kwargs = {"price_in_per_mtok": {"coerce_to_string": False}, "price_out_per_mtok": {"coerce_to_string": False}}


class JudgeInput(serializers.Serializer):
    """A judge's configuration; ``settings`` is the JSON of SPEC §7 (json_mode, timeouts, few-shot,
    rate limits, panel members...), checked by the same rules as the judges page."""
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
    price_in_per_mtok = serializers.DecimalField(**MONEY, default=0)
    price_out_per_mtok = serializers.DecimalField(**MONEY, default=0)
    settings = serializers.DictField(required=False, default=dict)
    prompt_template = serializers.PrimaryKeyRelatedField(
        queryset=PromptTemplate.objects.all(), required=False, allow_null=True,
        pk_field=serializers.IntegerField(min_value=1, max_value=ID_MAX))  # checked before the query: no overflow

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["backend"].choices = backend_names(configurable=True)  # the registry's, as of now


class JudgeListApi(_ProjectList):
    action_needed = "manage"
    serializer_class = JudgeOutput

    def project_queryset(self, project):
        return Judge.objects.filter(project=project).order_by("name", "id")

    @extend_schema(responses=responses(JudgeOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=JudgeInput, responses=write_responses({201: JudgeOutput}))
    def post(self, request, slug: str):
        project = self.project()
        data = JudgeInput(data=request.data)
        data.is_valid(raise_exception=True)
        if Judge.objects.filter(project=project, name=data.validated_data["name"]).exists():
            return ApiResponse({"name": [f"a judge {data.validated_data['name']!r} exists in this project"]},
                               status=status.HTTP_400_BAD_REQUEST)
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

    @extend_schema(request=JudgeInput(partial=True), responses=write_responses(JudgeOutput))
    def patch(self, request, slug: str, judge_id: int):
        """Change some fields of an LLM judge, the baseline or a panel (imported judges are data)."""
        judge = self._judge(request, slug, judge_id)
        if not backend_for(judge).configurable:
            return ApiResponse({"backend": [f"a {judge.backend} judge is data, not a configuration; it cannot be edited"]},
                               status=status.HTTP_400_BAD_REQUEST)
        data = JudgeInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "name" in values and Judge.objects.filter(project=judge.project, name=values["name"]).exclude(pk=judge.pk).exists():
            return ApiResponse({"name": [f"a judge {values['name']!r} exists in this project"]}, status=status.HTTP_400_BAD_REQUEST)
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


class ScopeInput(serializers.Serializer):
    cases, models, criteria, responses = _ids(), _ids(), _ids(), _ids()
    # tests/api check these are plan.SCOPE_KEYS


class RunInput(serializers.Serializer):
    judge = serializers.CharField(max_length=200, help_text="The judge's name.")
    scope = ScopeInput(required=False, help_text="A slice by case, model, criterion or response ids; empty: the project.")
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True)
    variant = serializers.CharField(max_length=100, required=False, allow_blank=True,
                                    help_text="Run on a rubric variant (NAME~variant), e.g. reversed.")


class ResumeInput(serializers.Serializer):
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True)


class RunListApi(_ProjectList):
    action_needed = "manage"
    serializer_class = RunOutput

    def project_queryset(self, project):
        return JudgeRun.objects.filter(judge__project=project).select_related("judge").order_by("-id")

    @extend_schema(responses=responses(RunOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=RunInput, responses=write_responses({202: RunOutput}))
    def post(self, request, slug: str):
        """Start a run of a judge on a worker; follow it at its URL (``/runs/{id}/``)."""
        project = self.project()
        data = RunInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        judge = Judge.objects.filter(project=project, name=d["judge"]).first()
        if judge is None:
            return ApiResponse({"judge": [f"no judge {d['judge']!r} in this project"]}, status=status.HTTP_400_BAD_REQUEST)
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
    @extend_schema(request=ResumeInput, responses=write_responses(RunOutput))
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


class JudgmentFilter(django_filters.FilterSet):
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
