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

The adjudication queue keeps what the cohorts decided and brings it up to date response by
response instead: ``disputes_fingerprint`` holds what those counts rest on apart from the labels
and the assignments (a change there counts the whole project again), ``label_mark`` where the
labels and assignments stand, and ``responses_changed`` which responses changed since a mark.
"""
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

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


def _rows_kept(project: Project) -> list:
    """The parts both fingerprints read of the project's criteria, responses and imports: counts
    catch cascading deletions, maxima additions, the newest rubric version a re-import."""
    return [
        Criterion.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id"), r=Max("rubric_version_id")),
        Response.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
        ImportBatch.objects.filter(project=project).aggregate(n=Count("id"), m=Max("id")),
    ]


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
        *_rows_kept(project),
        # Submitting, checking or reopening an assignment turns its labels final or draft.
        # An assignment made or removed for a response turns the cohort checker's labels there draft or final.
        Assignment.objects.filter(project=project).aggregate(
            f=Count("id", filter=Q(status__in=FINAL_STATUSES)), c=Count("id", filter=Q(status=Assignment.CHECKED)),
            s=Max("submitted_at"), k=Max("checked_at"), r=Max("reopened_at"), n=Count("id"), m=Max("id"),
        ),
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


def disputes_fingerprint(*, project: Project) -> str:
    """sha256 (hex, 16 chars) of what the cohorts' decisions rest on apart from the labels and the
    assignments, which ``label_mark`` follows: a change here (a criterion, a response, a cohort, an
    import, an admin edit) means counting the whole project again; a judge's run, an adjudication
    or a report setting changes nothing here."""
    parts = [
        project.pk, project.created_at,
        Project.objects.filter(pk=project.pk).values_list("data_changed_at", flat=True).first(),
        *_rows_kept(project),
        list(Cohort.objects.filter(project=project).order_by("pk").values_list("pk", "position")),
    ]
    text = json.dumps(parts, default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# How far back ``responses_changed`` looks past a mark's time: a change stamps its time before it
# takes its ids and commits a moment later, so a change stamped shortly before the mark may still
# have been invisible when the mark was read. Every write of the write services commits within
# seconds of its stamp (a lock wait ends in ``StaleRead`` and a retry takes a new stamp); an import,
# the one long write, counts the whole project again (``disputes_fingerprint``).
TIME_MARGIN = timedelta(minutes=5)


@dataclass(frozen=True)
class LabelMark:
    """Where a project's label changes stand: its newest label and label-history ids, the tallies
    and newest times of its submitted, checked and reopened (regular) assignments, which turn labels
    final or back into drafts, and how many assignments it has and the newest one's id (an
    assignment made for a response turns the cohort checker's labels there into drafts, a removed
    one back); ``newest``: when the newest of those changes was made."""

    label_id: int
    history_id: int
    assignments: tuple
    newest: datetime | None
    n_assignments: int = 0
    assignment_id: int = 0


def label_mark(*, project: Project) -> LabelMark:
    """The project's ``LabelMark`` now: two index lookups and one pass over its assignments. A check
    item's status counts for nothing here: its labels are never final nor drafts."""
    label = Label.objects.filter(project=project).order_by("-id").values_list("id", "updated_at").first() or (0, None)
    history = (LabelHistory.objects.filter(project=project).order_by("-id").values_list("id", "changed_at").first()
               or (0, None))
    regular = Q(is_check=False)
    tally = Assignment.objects.filter(project=project).aggregate(
        f=Count("id", filter=regular & Q(status__in=FINAL_STATUSES)),
        c=Count("id", filter=regular & Q(status=Assignment.CHECKED)),
        s=Max("submitted_at", filter=regular), k=Max("checked_at", filter=regular), r=Max("reopened_at", filter=regular),
        n=Count("id"), m=Max("id"), made=Max("created_at"))
    times = [t for t in (label[1], history[1], tally["s"], tally["k"], tally["r"], tally["made"]) if t is not None]
    return LabelMark(label_id=label[0], history_id=history[0],
                     assignments=(tally["f"], tally["c"], tally["s"], tally["k"], tally["r"]),
                     newest=max(times) if times else None, n_assignments=tally["n"], assignment_id=tally["m"] or 0)


def responses_changed(*, project: Project, since: LabelMark, at: datetime) -> set[int] | None:
    """The responses of ``project`` whose labels or assignments may have changed since ``since`` was
    read at ``at``: every label-history row newer than the mark or stamped within ``TIME_MARGIN``
    before it, every label written past the write services (no history) newer than the mark, every
    (regular) assignment submitted, checked or reopened within the margin, every (regular)
    assignment made since the mark or within the margin. A superset, or None where a change cannot
    be placed on a response: a deletion whose history does not name it, an assignment removed
    (nothing of it is left), or one that committed after the mark with an id below its newest."""
    window = at - TIME_MARGIN
    # An import's rows are left out: an import changes ``disputes_fingerprint``, and a count made on
    # the same fingerprint was made after it committed (rows, batch and all, in one transaction).
    recent = (LabelHistory.objects.filter(project=project).filter(Q(id__gt=since.history_id) | Q(changed_at__gte=window))
              .exclude(action=LabelHistory.IMPORT))
    # A deleted label's earlier rows name no label any more; its "delete" row, newer, names the response.
    changed = set(recent.exclude(action=LabelHistory.DELETE).order_by().values_list("label__response_id", flat=True).distinct())
    changed.discard(None)
    deleted = set()
    for old in recent.filter(action=LabelHistory.DELETE).order_by().values_list("old", flat=True):
        if not (isinstance(old, dict) and old.get("response")):
            return None
        deleted.add(str(old["response"]))  # a deletion keeps the response's external id
    if deleted:
        found = dict(Response.objects.filter(project=project, external_id__in=deleted).values_list("external_id", "pk"))
        if len(found) < len(deleted):
            return None
        changed.update(found.values())
    changed.update(Label.objects.filter(project=project, id__gt=since.label_id).order_by()
                   .values_list("response_id", flat=True).distinct())
    changed.update(Assignment.objects.filter(project=project, is_check=False).filter(
        Q(submitted_at__gte=window) | Q(checked_at__gte=window) | Q(reopened_at__gte=window))
        .order_by().values_list("response_id", flat=True).distinct())
    # Assignments made: the ids past the mark, and those made within the margin. Every assignment now
    # is one the mark counted or one past its newest id, unless one was removed or committed late.
    made = Assignment.objects.filter(project=project).aggregate(n=Count("id"), newer=Count("id", filter=Q(id__gt=since.assignment_id)))
    if made["n"] != since.n_assignments + made["newer"]:
        return None
    # A check item made changes no decision (its labels never count; removed, they would: counted above).
    changed.update(Assignment.objects.filter(project=project, is_check=False)
                   .filter(Q(id__gt=since.assignment_id) | Q(created_at__gte=window))
                   .order_by().values_list("response_id", flat=True).distinct())
    return changed
