"""A cheap fingerprint of everything a project's reports read, so that cached report
results are keyed by it and go stale by themselves when a label, judgment, adjudication,
criterion, response or judge changes — no signals needed (bulk imports skip signals).

Every part is an index lookup or a small table, because the fingerprint is computed on
each report page view and counting a million labels takes a second on PostgreSQL: the
maxima of label and judgment ids catch inserts, the newest label-history id catches every
edit of a label (each change appends history in the same transaction), judge-run progress
catches judgments a run writes or redoes, the import batches catch a re-import that
rewrote judgments in place, the newest admin log entry catches edits and deletions made
in the Django admin, and the counts of responses and criteria catch cascading deletions.
An ORM ``update()`` or ``delete()`` of labels or judgments outside these paths is not
seen; no code path of evalsite does that.
"""
import hashlib
import json

from django.contrib.admin.models import LogEntry
from django.db.models import Count, Max, Sum

from annotation.models import Criterion, ImportBatch, Label, LabelHistory, Project, Response

from ..models import Adjudication, Judge, JudgeRun, Judgment


def project_fingerprint(*, project: Project) -> str:
    """sha256 (hex, 16 chars) of counts and maxima of the project's decision tables."""
    judges = list(Judge.objects.filter(project=project).order_by("pk").values_list("pk", "name", "backend", "model", "condition", "settings"))
    parts = [
        project.pk, project.created_at, project.coverage_k, project.low_agreement_threshold,
        Label.objects.filter(project=project).aggregate(m=Max("id"))["m"],
        LabelHistory.objects.aggregate(m=Max("id"))["m"],
        Judgment.objects.filter(judge_id__in=[j[0] for j in judges]).aggregate(m=Max("id"))["m"] if judges else None,
        LogEntry.objects.aggregate(m=Max("id"))["m"],
        JudgeRun.objects.filter(judge__project=project).aggregate(
            n=Count("id"), m=Max("id"), d=Sum("done_calls"), f=Max("finished_at")
        ),
        Adjudication.objects.filter(project=project).aggregate(n=Count("id"), u=Max("updated_at")),
        Criterion.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id"), r=Max("rubric_version_id")),
        Response.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        ImportBatch.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        judges,
    ]
    text = json.dumps(parts, default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
