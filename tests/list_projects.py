"""Two projects for the query-count tests of the list pages and the list API (issue 26, point 5):
the clinical generator's study at two sizes, the second three times the first in cases and
more in criteria and models, each with assignments made by the assignment service, judge runs,
adjudications and ended data jobs, so every list of the large project has more rows than the small one's."""
from django.contrib.auth import get_user_model

from annotation.assignments import ROUND_ROBIN, project_assign
from annotation.models import Cohort, Criterion, Project, Response
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGES, generate_clinical
from grading.adjudication.services import adjudication_record
from grading.bundles import bundle_import
from grading.judges.services import judge_run_create
from grading.models import DataJob, Judge
from tests.roles import grant

# slug, cases, criteria, models, judges, cohorts, and how many runs, adjudications, viewers and data jobs
SIZES = (("small", 2, 3, ["m-a", "m-b"], DEFAULT_JUDGES[:2], DEFAULT_COHORTS[:1], 1),
         ("large", 6, 6, ["m-a", "m-b", "m-c"], DEFAULT_JUDGES, (*DEFAULT_COHORTS, ("group-3", ("g3-ann1", "g3-ann2"), None)), 3))


def list_projects(tmp_path, *, manager_name: str = "list-counter"):
    """Import both projects and give each its rows; returns the manager of both (a user)."""
    manager = get_user_model().objects.create_user(manager_name)
    for slug, cases, criteria, models, judges, cohorts, extra in SIZES:
        generate_clinical(tmp_path / slug, slug=slug, n_cases=cases, n_criteria=criteria, models=models,
                          judges=judges, cohorts=cohorts, overlap=2, human_answer_cases=1, seed=3)
        bundle_import(path=tmp_path / slug)
        project = Project.objects.get(slug=slug)
        grant(manager, project)
        for n in range(extra):
            grant(get_user_model().objects.get_or_create(username=f"{slug}-viewer-{n}")[0], project, "viewer")
        for cohort in Cohort.objects.filter(project=project):
            project_assign(project=project, cohort_id=cohort.pk, overlap=2, method=ROUND_ROBIN, seed=None, by=manager)
        for judge in Judge.objects.filter(project=project).order_by("name")[:extra]:
            judge_run_create(judge=judge, user=manager)
        pairs = zip(Response.objects.filter(project=project).order_by("pk")[:extra],
                    Criterion.objects.filter(project=project).order_by("pk")[:extra], strict=True)
        for n in range(extra):  # an export and an import, ended
            DataJob.objects.create(kind=DataJob.IMPORT if n % 2 else DataJob.EXPORT, project=project, user=manager,
                                   status=DataJob.FINISHED, result={"provenance": {"agreed": 1}} if n % 2 == 0 else {"cases": 1})
        for response, criterion in pairs:
            adjudication_record(response=response, criterion=criterion, user=manager, verdict="met",
                                confidence="probable", category="annotator_slip", note="query-count fixture")
    return manager
