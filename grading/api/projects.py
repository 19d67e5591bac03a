"""Projects and their content: list, detail, a new project or an import from a bundle upload (a
data job with a status URL), cases, criteria, rubric versions, responses, cohorts with their
members, data jobs and their files, and the gold export (a job, then a download)."""
import django_filters
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, parsers, serializers, status
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from annotation.access import project_get_for, projects_for, roles_by_project
from annotation.models import Case, Cohort, Criterion, Project, ProjectRole, Response, RubricVersion
from annotation.projects import ROLE_CHOICES, cohort_member_add, project_role_set
from evalsite.api_filters import StrictFilterSet
from evalsite.api_inputs import JsonInput

from .. import jobs
from ..formats.registry import format_names
from ..models import DataJob
from .common import CONFLICT_ANSWER, Pagination, StrictBooleanFilter, responses, validation_error, write_responses


class ProjectOutput(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["slug", "name", "description", "blind", "overlap", "coverage_k", "low_agreement_threshold",
                  "show_reference_answer", "hide_rater_names", "guidelines", "traits", "created_at", "role"]

    def get_role(self, project) -> str:
        user = self.context["request"].user
        return "superuser" if user.is_superuser else self.context["roles"].get(project.pk, "")


class JobOutput(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = DataJob
        fields = ["id", "kind", "project", "status", "progress_pct", "stage", "result", "error", "created_at",
                  "started_at", "finished_at", "url", "download_url"]

    def get_url(self, job) -> str:
        return f"/api/jobs/{job.pk}/"

    def get_download_url(self, job) -> str | None:
        return f"/api/jobs/{job.pk}/download/" if job.kind == DataJob.EXPORT and job.status == DataJob.FINISHED else None


class UploadInput(serializers.Serializer):
    # An empty file is taken like any other: what it holds is the job's to read (a job that reads nothing fails, saying so).
    bundle = serializers.FileField(allow_empty_file=True,
                                   help_text="The file to import (a bundle: a .zip of its folder, project.json and the .jsonl files).")
    format = serializers.ChoiceField(choices=[], required=False, allow_blank=True,
                                     help_text="The file's format, which reads the file whatever its name; left out, the "
                                               "file's suffix says it (.zip, .csv...), else it is recognized from the file "
                                               "when the job runs (a file nothing reads fails the job, saying so).")
    update_settings = serializers.BooleanField(default=False, help_text="Also apply the bundle's project settings.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = format_names(reading=True)  # the declared formats, at each request


class NewProjectUploadInput(UploadInput):
    project = serializers.SlugField(
        required=False, max_length=100,
        help_text="For a file that names no project (HealthBench, Label Studio, a table): the slug of the project it goes "
                  "into, made when new. Left out: a new project named after the file. A bundle names its own project.")


def _start_import(request, project: Project | None) -> ApiResponse:
    data = (UploadInput if project is not None else NewProjectUploadInput)(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        job = jobs.data_job_import_start(upload=data.validated_data["bundle"], user=request.user, project=project,
                                         update_settings=data.validated_data["update_settings"],
                                         data_format=data.validated_data.get("format", ""),
                                         project_slug=data.validated_data.get("project", ""), name_says_format=False)
    except ValidationError as exc:
        return validation_error(exc)
    return ApiResponse(JobOutput(job).data, status=status.HTTP_202_ACCEPTED, headers={"Location": f"/api/jobs/{job.pk}/"})


UPLOAD_ANSWERS = {202: JobOutput, 413: OpenApiResponse(OpenApiTypes.OBJECT, description="the upload is over the size limit")}


class ProjectListApi(generics.ListAPIView):
    """The projects in which the caller has a role; POST a bundle to create one (superusers)."""
    serializer_class = ProjectOutput
    pagination_class = Pagination
    parser_classes = [parsers.MultiPartParser]  # a file: a form without one cannot carry it

    def get_queryset(self):
        return projects_for(user=self.request.user).order_by("slug")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "roles": roles_by_project(user=self.request.user)}

    @extend_schema(responses=responses(ProjectOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=NewProjectUploadInput, responses=write_responses(UPLOAD_ANSWERS))
    def post(self, request):
        """Import a bundle as a new project: a job, whose ``url`` tells when it is done."""
        if not request.user.is_superuser:
            raise PermissionDenied("Only superusers create projects; a project's managers import into it")
        return _start_import(request, None)


class ProjectDetailApi(APIView):
    @extend_schema(responses=responses(ProjectOutput))
    def get(self, request, slug: str):
        project = project_get_for(user=request.user, action="view", slug=slug)
        context = {"request": request, "roles": roles_by_project(user=request.user)}
        return ApiResponse(ProjectOutput(project, context=context).data)


class ProjectImportApi(APIView):
    parser_classes = [parsers.MultiPartParser]  # a file: a form without one cannot carry it

    @extend_schema(request=UploadInput, responses=write_responses(UPLOAD_ANSWERS))
    def post(self, request, slug: str):
        """Import a bundle into this project (its project.json must name it): a job."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        return _start_import(request, project)


class GoldExportApi(APIView):
    @extend_schema(request=None, responses=responses({202: JobOutput}))
    def post(self, request, slug: str):
        """Export the gold set (the bundle ``export_gold`` writes): a job; download it when finished."""
        project = project_get_for(user=request.user, action="export", slug=slug)
        job = jobs.data_job_export_start(project=project, user=request.user)
        return ApiResponse(JobOutput(job).data, status=status.HTTP_202_ACCEPTED, headers={"Location": f"/api/jobs/{job.pk}/"})


class JobDetailApi(APIView):
    @extend_schema(responses=responses(JobOutput))
    def get(self, request, job_id: int):
        return ApiResponse(JobOutput(jobs.data_job_get_for(user=request.user, job_id=job_id)).data)


class JobDownloadApi(APIView):
    @extend_schema(responses=responses({(200, "application/zip"): OpenApiTypes.BINARY}))
    def get(self, request, job_id: int):
        job = jobs.data_job_get_for(user=request.user, job_id=job_id)
        if job.kind != DataJob.EXPORT or job.status != DataJob.FINISHED:
            raise Http404("This job has no file to download")
        path = jobs.job_path(job)
        if path is None:
            raise Http404("The file is no longer there; export again")
        return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name, content_type="application/zip")


class JobListApi(generics.ListAPIView):
    """The project's data jobs that the caller may open (adjudicators: exports; managers: exports and
    imports), newest first: each with its state and, once an export is ready, its download."""
    serializer_class = JobOutput
    pagination_class = Pagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a request
            return DataJob.objects.none()
        project = project_get_for(user=self.request.user, action="export", slug=self.kwargs["slug"])
        return jobs.data_jobs_for(project=project, user=self.request.user)[2].select_related("project")

    @extend_schema(responses=responses(JobOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


# --- the project's content --------------------------------------------------------------------


class _ProjectList(generics.ListAPIView):
    """A list of one project's objects, for the roles ``action`` allows, paginated in a stable order."""
    action_needed = "view"
    pagination_class = Pagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a request
            return self.serializer_class.Meta.model.objects.none()
        return self.project_queryset(self.project())

    def project_queryset(self, project):  # pragma: no cover - abstract
        raise NotImplementedError

    def project(self) -> Project:
        if not hasattr(self, "_project"):
            self._project = project_get_for(user=self.request.user, action=self.action_needed, slug=self.kwargs["slug"])
        return self._project


class CaseOutput(serializers.ModelSerializer):
    case_id = serializers.CharField(source="external_id")

    class Meta:
        model = Case
        fields = ["id", "case_id", "position", "prompt", "messages", "reference_answer", "metadata", "difficulty", "register"]


class CaseFilter(StrictFilterSet):
    case_id = django_filters.CharFilter(field_name="external_id")

    class Meta:
        model = Case
        fields = ["case_id", "difficulty", "register"]


class CaseListApi(_ProjectList):
    action_needed = "inspect"
    serializer_class = CaseOutput
    filterset_class = CaseFilter

    def project_queryset(self, project):
        return Case.objects.filter(project=project).order_by("position", "id")


class CriterionOutput(serializers.ModelSerializer):
    criterion_id = serializers.CharField(source="external_id")
    case_id = serializers.CharField(source="case.external_id", allow_null=True, default=None)
    rubric_version = serializers.IntegerField(source="rubric_version_id")

    class Meta:
        model = Criterion
        fields = ["id", "criterion_id", "case_id", "rubric_version", "position", "text", "kind", "weight", "options",
                  "tags", "min_evidence", "checklist_of", "guidance"]


class CriterionFilter(StrictFilterSet):
    case_id = django_filters.CharFilter(field_name="case__external_id")
    criterion_id = django_filters.CharFilter(field_name="external_id")

    class Meta:
        model = Criterion
        fields = ["case_id", "criterion_id", "kind"]


class CriterionListApi(_ProjectList):
    serializer_class = CriterionOutput
    filterset_class = CriterionFilter

    def project_queryset(self, project):
        return Criterion.objects.filter(project=project).select_related("case").order_by("case_id", "position", "id")


class RubricVersionOutput(serializers.ModelSerializer):
    case_id = serializers.CharField(source="case.external_id", allow_null=True, default=None)

    class Meta:
        model = RubricVersion
        fields = ["id", "case_id", "content_hash", "is_current", "content", "created_at"]


class RubricVersionFilter(StrictFilterSet):
    case_id = django_filters.CharFilter(field_name="case__external_id")
    is_current = StrictBooleanFilter()

    class Meta:
        model = RubricVersion
        fields = ["case_id", "is_current"]


class RubricVersionListApi(_ProjectList):
    serializer_class = RubricVersionOutput
    filterset_class = RubricVersionFilter

    def project_queryset(self, project):
        return RubricVersion.objects.filter(project=project).select_related("case").order_by("id")


class ResponseOutput(serializers.ModelSerializer):
    response_id = serializers.CharField(source="external_id")
    case_id = serializers.CharField(source="case.external_id")

    class Meta:
        model = Response
        fields = ["id", "response_id", "case_id", "position", "model", "author_kind", "text"]


class ResponseFilter(StrictFilterSet):
    case_id = django_filters.CharFilter(field_name="case__external_id")
    response_id = django_filters.CharFilter(field_name="external_id")

    class Meta:
        model = Response
        fields = ["case_id", "response_id", "model"]


class ResponseListApi(_ProjectList):
    action_needed = "inspect"
    serializer_class = ResponseOutput
    filterset_class = ResponseFilter

    def project_queryset(self, project):
        return Response.objects.filter(project=project).select_related("case").order_by("position", "id")


class CohortOutput(serializers.ModelSerializer):
    annotators = serializers.SerializerMethodField()
    checkers = serializers.SerializerMethodField()

    class Meta:
        model = Cohort
        fields = ["id", "name", "position", "annotators", "checkers"]

    def _members(self, cohort, role) -> list[str]:
        return sorted(m.user.username for m in cohort.memberships.all() if m.role == role)

    def get_annotators(self, cohort) -> list[str]:
        return self._members(cohort, "annotator")

    def get_checkers(self, cohort) -> list[str]:
        return self._members(cohort, "checker")


class CohortListApi(_ProjectList):
    action_needed = "manage"
    serializer_class = CohortOutput

    def project_queryset(self, project):
        return Cohort.objects.filter(project=project).prefetch_related("memberships__user").order_by("position", "id")


class MemberInput(JsonInput):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=["annotator", "checker"], default="annotator")


class CohortMemberApi(APIView):
    @extend_schema(request=MemberInput, responses=write_responses({201: CohortOutput}, CONFLICT_ANSWER))
    def post(self, request, slug: str, cohort_id: int):
        """Add a user to the cohort as an annotator or a checker (one cohort per user and project)."""
        project = project_get_for(user=request.user, action="manage", slug=slug)
        cohort = Cohort.objects.filter(pk=cohort_id, project=project).first()
        if cohort is None:
            raise Http404("No such cohort")
        data = MemberInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            cohort_member_add(cohort=cohort, username=data.validated_data["username"], role=data.validated_data["role"],
                              by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        cohort = Cohort.objects.prefetch_related("memberships__user").get(pk=cohort.pk)
        return ApiResponse(CohortOutput(cohort).data, status=status.HTTP_201_CREATED)


class RoleOutput(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.CharField()


class RoleInput(JsonInput):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=ROLE_CHOICES, help_text="none takes the user's role away")


class ProjectRoleApi(_ProjectList):
    """The project's roles (managers); POST gives, changes or takes away one (audited)."""
    action_needed = "manage"
    serializer_class = RoleOutput

    def project_queryset(self, project):
        return ProjectRole.objects.filter(project=project).select_related("user").order_by("user__username", "id")

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return ProjectRole.objects.none()
        return self.project_queryset(self.project())

    @extend_schema(responses=responses(RoleOutput(many=True)))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=RoleInput, responses=write_responses(RoleInput))
    def post(self, request, slug: str):
        project = self.project()
        data = RoleInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            project_role_set(project=project, username=data.validated_data["username"], role=data.validated_data["role"],
                             by=request.user)
        except ValidationError as exc:
            return validation_error(exc)
        return ApiResponse(data.validated_data)
