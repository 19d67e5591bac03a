"""A cheap fingerprint of everything one project's reports read, so that cached report
results are keyed by it and go stale by themselves when a label, judgment, adjudication,
criterion, response or judge of *that* project changes — and only then: work in another
project never invalidates this one's reports. No signals are needed (bulk imports skip them).

Every part is an index lookup or a small table, because the fingerprint is computed on
each report page view and counting a million labels takes a second on PostgreSQL: the
maxima of label and judgment ids catch inserts, the project's newest label-history id
catches every edit of a label (each change appends history in the same transaction, and the
history row carries the project), judge-run progress catches judgments a run writes or
redoes, the import batches catch a re-import that rewrote judgments in place, the project's
``data_changed_at`` catches edits and deletions made in the Django admin (its admin classes
stamp it), submitted, checked and reopened assignments are counted and their newest times read
(they turn labels final or back into drafts), quality control's exclusions are counted, the project's own settings are read fresh,
its cohorts (name and order) are read and its cohort memberships counted (a rater is named by membership),
its routing designs' rounds are counted (a design's draws weight the routed estimates),
and the counts of responses and
criteria catch cascading deletions. An ORM ``update()`` or ``delete()`` of labels or
judgments outside these paths is not seen; no code path of evalsite does that.
"""
import hashlib
import json

from django.db.models import Count, Max, Q, Sum

from annotation.models import (
    Assignment,
    CaseQuality,
    Cohort,
    CohortMembership,
    Criterion,
    ImportBatch,
    Label,
    LabelHistory,
    Project,
    Response,
)
from annotation.selectors.final import FINAL_STATUSES

from ..models import Adjudication, Judge, JudgeRun, Judgment, RoutingDesign


def project_fingerprint(*, project: Project, adjudications: bool = True) -> str:
    """sha256 (hex, 16 chars) of counts and maxima of the project's decision tables.
    ``adjudications=False``: of all but the adjudications (what the cohorts decided does not change
    as an adjudicator settles items)."""
    judges = list(
        Judge.objects.filter(project=project).order_by("pk").values_list("pk", "name", "backend", "model", "condition", "settings")
    )
    parts = [
        project.pk, project.created_at,
        list(Project.objects.filter(pk=project.pk).values_list("coverage_k", "low_agreement_threshold", "data_changed_at",
                                                                  "stratum_groups")),
        Label.objects.filter(project=project).aggregate(m=Max("id"))["m"],
        LabelHistory.objects.filter(project=project).aggregate(m=Max("id"))["m"],
        Judgment.objects.filter(judge_id__in=[j[0] for j in judges]).aggregate(m=Max("id"))["m"] if judges else None,
        JudgeRun.objects.filter(judge__project=project).aggregate(
            n=Count("id"), m=Max("id"), d=Sum("done_calls"), f=Max("finished_at")
        ),
        Adjudication.objects.filter(project=project).aggregate(n=Count("id"), u=Max("updated_at")) if adjudications else None,
        Criterion.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id"), r=Max("rubric_version_id")),
        Response.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        # Submitting, checking or reopening an assignment turns its labels final or draft.
        Assignment.objects.filter(project=project).aggregate(
            f=Count("id", filter=Q(status__in=FINAL_STATUSES)), c=Count("id", filter=Q(status=Assignment.CHECKED)),
            s=Max("submitted_at"), k=Max("checked_at"), r=Max("reopened_at"),
        ),
        ImportBatch.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        CaseQuality.objects.filter(project=project).aggregate(n=Count("id"), x=Count("id", filter=Q(excluded=True)), u=Max("updated_at")),
        judges,
        # The cohorts are sources (their names and order name the pages' comparisons), and the pairwise
        # page names each rater by the cohort membership that holds them: a member added or removed changes it.
        list(Cohort.objects.filter(project=project).order_by("pk").values_list("pk", "name", "position")),
        CohortMembership.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        # A routing design's budget and draws set which labels the routed estimates weight, and how.
        RoutingDesign.objects.filter(project=project).aggregate(n=Count("id"), r=Sum("rounds"), u=Max("updated_at")),
    ]
    text = json.dumps(parts, default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
