"""The data of the role matrix (tests/test_role_matrix.py): the two projects' bundles with their
markers, what each principal must never see (``SECRETS``), and the objects each URL needs."""
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.bundles import bundle_parts


def report_page_stub(*, project, page: str, params: dict) -> dict:
    """What a report page shows here instead of its figures (tests/grading/reports computes those; at
    about a second a page they would be most of this module's time): an error line and one table."""
    return {"error": f"{page} is not computed in the role matrix", "tables": {"figures": {"columns": ["n"], "rows": [[1]]}}}


# A case without responses, for quality control to draw and flag without changing any report's figures.
QUIET_CASE = {"case_id": "c3", "prompt": "A case nobody answered."}


def _mini_parts() -> dict:
    parts = bundle_parts()
    parts["cases"].append(QUIET_CASE)
    for row in parts["labels"]:  # whose rationale a page shows is visible in its body
        row["rationale"] = f"{row.get('rationale', '')} RATIONALE-OF-{row['annotator'].upper()}".strip()
    for row in parts["judgments"]:
        row["explanation"] = f"{row['explanation']} JUDGE-OUTPUT-MARK".strip()
    return parts


# What the body of any answer to a principal must not hold (independence and blinding): another
# annotator's rationale, another cohort's, a judge's output, a source model (both projects are blind).
MODELS = ("model-a", "model-b")
SECRETS = {
    "anonymous": ("RATIONALE-OF-", "JUDGE-OUTPUT-MARK", *MODELS),
    "nobody": ("RATIONALE-OF-", "JUDGE-OUTPUT-MARK", *MODELS),
    "staff": ("RATIONALE-OF-", "JUDGE-OUTPUT-MARK", *MODELS),
    "annotator1": ("RATIONALE-OF-ANN2", "RATIONALE-OF-ANN3", "RATIONALE-OF-CHK1", "JUDGE-OUTPUT-MARK", *MODELS),
    "annotator2": ("RATIONALE-OF-ANN1", "RATIONALE-OF-ANN2", "RATIONALE-OF-CHK1", "JUDGE-OUTPUT-MARK", *MODELS),
    "checker": ("RATIONALE-OF-ANN3", "JUDGE-OUTPUT-MARK", *MODELS),  # the checker of group-1 reviews ann1 and ann2
}


def _other_parts() -> dict:
    """The mini bundle as a second project whose names are distinctive, so that a leak shows."""
    parts = _mini_parts()
    cohorts = {"group-1": "hidden-cohort-1", "group-2": "hidden-cohort-2"}
    parts["project"].update(slug="other", name="Hidden study", description="HIDDEN-PROJECT-DESCRIPTION",
                            cohorts=[{"name": name} for name in cohorts.values()])
    parts["project"]["judges"][0]["name"] = "hidden-judge"
    for row in parts["responses"]:
        row["response_id"] = f"o-{row['response_id']}"
    for row in parts["labels"]:
        row["response_id"], row["cohort"] = f"o-{row['response_id']}", cohorts[row["cohort"]]
    for row in parts["judgments"]:
        row["response_id"], row["judge"] = f"o-{row['response_id']}", "hidden-judge"
    return parts


def _project_objects(slug: str, starter, jobs_dir) -> SimpleNamespace:
    """The ids a URL of the project needs, each in a state in which an allowed request changes
    something (so that a refused one could have): a submitted and an open assignment, a running and
    a stopped judge run, a case drawn for audit and flagged by screening, a finished export with
    its file and a queued import."""
    from annotation.assignments import assignments_create
    from annotation.models import Assignment, Case, CaseQuality, Cohort, CohortMembership, Criterion, Project
    from grading.models import DataJob, Judge, JudgeRun

    project = Project.objects.get(slug=slug)
    cohort = Cohort.objects.filter(project=project).order_by("position").first()
    assignments_create(cohort=cohort)
    submitted = Assignment.objects.filter(cohort=cohort).order_by("position", "pk").first()
    # Submitted, so that the cohort's checker has an item to review (test_cohort_urls_reach_their_members).
    Assignment.objects.filter(pk=submitted.pk).update(status=Assignment.SUBMITTED, submitted_at=timezone.now())
    # The bundle's annotators labelled every response; a cohort without labels has assignments that can be reassigned.
    fresh = Cohort.objects.create(project=project, name="fresh", position=9)
    for username in ("fresh1", "fresh2"):
        user = get_user_model().objects.get_or_create(username=username)[0]
        CohortMembership.objects.create(project=project, cohort=fresh, user=user, role=CohortMembership.ANNOTATOR)
    assignments_create(cohort=fresh, overlap=1)
    unopened = Assignment.objects.filter(cohort=fresh).select_related("annotator").order_by("position", "pk").first()
    reassign_to = "fresh2" if unopened.annotator.username == "fresh1" else "fresh1"
    response = submitted.response
    criterion = Criterion.objects.filter(project=project, case=response.case).order_by("pk").first()
    judge = Judge.objects.get(project=project)
    running = JudgeRun.objects.create(judge=judge, status=JudgeRun.RUNNING, created_by=starter)
    stopped = JudgeRun.objects.create(judge=judge, status=JudgeRun.STOPPED, created_by=starter)
    lexical = Judge.objects.create(project=project, name="lexical", backend=Judge.BASELINE, model="lexical")  # editable
    # The case without responses drawn for audit and flagged by an earlier screening (its exclusion changes no figure).
    quiet = Case.objects.get(project=project, external_id=QUIET_CASE["case_id"])
    CaseQuality.objects.create(project=project, case=quiet, flagged=True, excluded=True, audit_sampled=True,
                               screen_accuracy_pct=100.0, screen_threshold_pct=50.0, screen_source="gold",
                               screen_models=["model-b"])
    export = DataJob.objects.create(kind=DataJob.EXPORT, project=project, user=starter, status=DataJob.FINISHED)
    (jobs_dir / str(export.pk)).mkdir(parents=True)
    (jobs_dir / str(export.pk) / f"{slug}-gold.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    DataJob.objects.filter(pk=export.pk).update(file=f"{export.pk}/{slug}-gold.zip")
    imported = DataJob.objects.create(kind=DataJob.IMPORT, project=project, user=starter, status=DataJob.QUEUED)
    return SimpleNamespace(
        project=project, slug=slug, response=response.pk, response_external_id=response.external_id,
        criterion=criterion.pk, criterion_external_id=criterion.external_id, judge_name=judge.name,
        qc_case=quiet.pk, cohort=cohort.pk, cohort_name=cohort.name,
        assignment=submitted.pk, open_assignment=unopened.pk, reassign_to=reassign_to, judge=judge.pk,
        editable_judge=lexical.pk, running_run=running.pk, stopped_run=stopped.pk, export_job=export.pk, import_job=imported.pk,
    )
