"""Reads of the annotator's side: "My work", the annotator's own assignments and labels, the
labeling page, rubrics of responses, and the researcher's assignment summary.
"""
from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, F, Q, Subquery
from django.http import Http404

from evalsite.converters import id_in_range
from evalsite.statements import statement_cursor

from ..decisions import quotes_missing
from ..markdown import quote_in_response
from ..models import Assignment, Case, Cohort, CohortMembership, Criterion, Label, Project, Response
from ..sentences import sentence_bank
from ..vocabulary import CANNOT_ASSESS, MET, NOT_MET, choice_encode, decision_text, verdict_caption

OPEN_STATUSES = (Assignment.OPEN, Assignment.IN_PROGRESS)


@dataclass
class ProjectWork:
    """One row of "My work": a project, the user's cohort and role, and their queue counts."""

    project: Project
    cohort: Cohort
    role: str
    counts: dict = field(default_factory=dict)
    review_counts: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return self.counts.get(Assignment.SUBMITTED, 0) + self.counts.get(Assignment.CHECKED, 0)

    @property
    def done_pct(self) -> float:
        return round(100.0 * self.done / self.total, 1) if self.total else 0.0


def work_list_for_user(*, user) -> list[ProjectWork]:
    """The user's projects with their own queue counts and, for checkers, the cohort's review queue."""
    memberships = list(CohortMembership.objects.filter(user=user).select_related("project", "cohort"))
    rows = {m.project_id: ProjectWork(project=m.project, cohort=m.cohort, role=m.role) for m in memberships}
    for project_id, status, n in (
        Assignment.objects.filter(annotator=user).values_list("project_id", "status").annotate(n=Count("id"))
    ):
        if project_id in rows:
            rows[project_id].counts[status] = n
    checker_cohorts = [m.cohort_id for m in memberships if m.role == CohortMembership.CHECKER]
    if checker_cohorts:
        # Review items are responses (one per cohort): ready when every assignment of it is
        # submitted or checked and not all are checked; checked when all are.
        reviewable = Q(status__in=[Assignment.SUBMITTED, Assignment.CHECKED])
        per_response = (
            Assignment.objects.filter(cohort_id__in=checker_cohorts, is_check=False).exclude(annotator=user).order_by()
            .values("project_id", "response_id")
            .annotate(n=Count("id"), done=Count("id", filter=reviewable), checked=Count("id", filter=Q(status=Assignment.CHECKED)))
            .filter(done__gt=0)
            .values_list("project_id", "n", "done", "checked")
        )
        for project_id, n, done, checked in per_response:
            state = "checked" if checked == n else "ready" if done == n else "waiting"
            counts = rows[project_id].review_counts
            counts[state] = counts.get(state, 0) + 1
    for row in rows.values():
        for status, _ in Assignment.STATUSES:
            row.counts.setdefault(status, 0)
    # An annotator's project without an item of theirs is not shown; a checker's always is (its
    # review queue fills as the cohort submits).
    return [row for row in rows.values() if row.total or row.role == CohortMembership.CHECKER]


ITEM_STATUSES = {key for key, _ in Assignment.STATUSES}


def items_for_annotator(*, user, project_id: int | None = None, status: str = "", case_query: str = ""):
    """The user's own assignments for "My items", in queue order, each with the number of
    criteria they decided (``decided``): filtered by project, status and a case id fragment.
    Nothing of anybody else's, and no source model (blind projects)."""
    items = (Assignment.objects.filter(annotator=user)
             .select_related("project", "response__case", "reopened_by")
             .annotate(decided=Count("response__labels", filter=Q(response__labels__annotator=user)))
             .order_by("project__name", "position", "id"))
    if project_id:
        items = items.filter(project_id=project_id)
    if status in ITEM_STATUSES:
        items = items.filter(status=status)
    if case_query.strip():
        items = items.filter(response__case__external_id__icontains=case_query.strip())
    return items


def membership_get(*, project_id: int, user) -> CohortMembership | None:
    return CohortMembership.objects.filter(project_id=project_id, user=user).select_related("cohort").first()


def assignment_get_for_annotator(
    *, assignment_id: int, user, for_update: bool = False, related=("project", "cohort", "response__case")
) -> Assignment:
    """The user's own assignment, or 404 (also for somebody else's existing assignment, and for
    an id no row can have: a body's id beyond the database's range)."""
    if not id_in_range(assignment_id):
        raise Http404("No such assignment")
    queryset = Assignment.objects.select_related(*related)
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    assignment = queryset.filter(pk=assignment_id, annotator_id=user.pk).order_by().first()
    if assignment is None:
        raise Http404("No such assignment")
    return assignment


def assignment_next_for_annotator(*, user, project_id: int | None = None) -> Assignment | None:
    """The annotator's next unfinished assignment: in-progress ones first, then open ones, in order."""
    queryset = Assignment.objects.filter(annotator_id=user.pk, status__in=OPEN_STATUSES)
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    in_progress = queryset.filter(status=Assignment.IN_PROGRESS).order_by("position", "id").first()
    return in_progress or queryset.order_by("position", "id").first()


def assignments_for_annotator(*, user, project_id: int | None = None):
    queryset = Assignment.objects.filter(annotator_id=user.pk).select_related("project", "response__case")
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    return queryset.annotate(
        decided=Count("labels", filter=Q(labels__annotator_id=user.pk))
    ).order_by("project__slug", "position", "id")


def criteria_for_response(*, response: Response) -> list[Criterion]:
    """The criteria of the rubric the response's case is judged against (``Case.rubric_version``), one query."""
    version = Case.objects.filter(pk=response.case_id).values("rubric_version_id")
    return list(Criterion.objects.filter(rubric_version_id=Subquery(version)).order_by("position", "id"))


def criterion_get_for_response(*, response: Response, criterion_id: int) -> Criterion:
    """A criterion of the response's rubric, or 404."""
    # order_by(): the models' default orderings follow foreign keys, and resolving them costs
    # more than the query itself.
    if not id_in_range(criterion_id):
        raise Http404("No such criterion")
    version = Case.objects.filter(pk=response.case_id).values("rubric_version_id")
    criterion = Criterion.objects.filter(pk=criterion_id, rubric_version_id=Subquery(version)).order_by().first()
    if criterion is None:
        raise Http404("No such criterion")
    return criterion


def criterion_get_for_assignment(*, assignment: Assignment, criterion_id: int) -> Criterion:
    """A criterion of the assignment's rubric, or 404."""
    return criterion_get_for_response(response=assignment.response, criterion_id=criterion_id)


def labels_by_criterion(*, response_id: int, annotator_id: int) -> dict[int, Label]:
    """One person's labels for one response: never anybody else's."""
    return {
        label.criterion_id: label
        for label in Label.objects.filter(response_id=response_id, annotator_id=annotator_id).order_by()
    }


def _progress_row(*, response_id: int, annotator_id: int) -> tuple[int, int, int]:
    """(decided, total, met on criteria that require quotes) in one small query, run after every
    save (a statement PostgreSQL plans once per connection: planning its joins was most of its cost)."""
    with statement_cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(c.id), COUNT(l.id),"
            f" COALESCE(SUM(CASE WHEN l.verdict = %s AND c.min_evidence > 0 THEN 1 ELSE 0 END), 0)"
            f" FROM {Response._meta.db_table} r"
            f" JOIN {Case._meta.db_table} k ON k.id = r.case_id"
            f" JOIN {Criterion._meta.db_table} c ON c.rubric_version_id = k.rubric_version_id"
            f" LEFT JOIN {Label._meta.db_table} l ON l.criterion_id = c.id AND l.response_id = r.id AND l.annotator_id = %s"
            f" WHERE r.id = %s",
            [MET, annotator_id, response_id],
        )
        total, decided, quotable = cursor.fetchone()
    return decided, total, quotable


def progress_counts(*, response_id: int, annotator_id: int) -> tuple[int, int]:
    """(decided, total) over the response's rubric for one annotator, in one small query."""
    decided, total, _ = _progress_row(response_id=response_id, annotator_id=annotator_id)
    return decided, total


def assignment_status_bar(*, assignment: Assignment) -> dict:
    """What the labeling page's progress bar shows after a save: decided, total and the criteria
    still missing quotes (``evidence_missing``, asked only when some met decision needs quotes)."""
    decided, total, quotable = _progress_row(response_id=assignment.response_id, annotator_id=assignment.annotator_id)
    return {"decided": decided, "total": total,
            "missing_evidence": evidence_missing(assignment=assignment) if quotable else []}


def evidence_missing(*, assignment: Assignment) -> list[dict]:
    """The criteria of the assignment marked met with fewer valid quotes than they require, in
    rubric order: ``{"number", "criterion_pk", "criterion_id", "needed", "have"}`` each."""
    labels = (Label.objects.filter(response_id=assignment.response_id, annotator_id=assignment.annotator_id, verdict=MET,
                                   criterion__min_evidence__gt=0,
                                   criterion__rubric_version_id=F("response__case__rubric_version_id"))
              .select_related("criterion").order_by("criterion__position"))  # one query; none when nothing needs quotes
    text = None
    missing = []
    for label in labels:
        criterion = label.criterion
        if text is None:
            text = assignment.response.text
        needed = quotes_missing(min_evidence=criterion.min_evidence, verdict=label.verdict, quotes=list(label.evidence or []),
                                is_valid=lambda quote: quote_in_response(quote=quote, text=text))
        if needed:
            missing.append({"number": criterion.position + 1, "criterion_pk": criterion.pk,
                            "criterion_id": criterion.external_id, "needed": criterion.min_evidence,
                            "have": criterion.min_evidence - needed})
    return missing


def evidence_missing_text(missing: list[dict]) -> str:
    """One sentence naming each criterion of ``evidence_missing`` (what a refused submit says)."""
    parts = [f"criterion {m['number']} ({m['criterion_id']}) needs {m['needed']} quote{'s' if m['needed'] != 1 else ''}, "
             f"has {m['have']}" for m in missing]
    return "marked met without the quotes it requires: " + "; ".join(parts)


def project_assignment_summary(*, project: Project) -> list[dict]:
    """Per cohort: members by role, assignments by status (hidden check items among them, ``checks``),
    responses covered by its own work (of the project's ``responses``); for researchers. A fixed number of queries, however many cohorts."""
    cohorts = list(project.cohorts.all())
    responses = project.responses.count()
    members = Counter(
        CohortMembership.objects.filter(project=project).values_list("cohort_id", "role").iterator()
    )
    statuses = {
        (cohort_id, status): n
        for cohort_id, status, n in Assignment.objects.filter(project=project)
        .values_list("cohort_id", "status")
        .annotate(n=Count("id"))
    }
    covered = dict(  # the cohort's own work: a hidden check item covers nothing for it
        Assignment.objects.filter(project=project, is_check=False)
        .values_list("cohort_id")
        .annotate(n=Count("response_id", distinct=True))
    )
    checks = dict(Assignment.objects.filter(project=project, is_check=True).values_list("cohort_id").annotate(n=Count("id")))
    return [
        {
            "cohort": cohort,
            "annotators": members.get((cohort.pk, CohortMembership.ANNOTATOR), 0),
            "checkers": members.get((cohort.pk, CohortMembership.CHECKER), 0),
            "by_status": [(label, statuses.get((cohort.pk, key), 0)) for key, label in Assignment.STATUSES],
            "total": sum(statuses.get((cohort.pk, key), 0) for key, _ in Assignment.STATUSES),
            "responses_covered": covered.get(cohort.pk, 0),
            "checks": checks.get(cohort.pk, 0),
            "responses": responses,
        }
        for cohort in cohorts
    ]


def choices_for(*, criterion: Criterion, label: Label | None) -> list[dict]:
    """The decision buttons of a criterion row: name and value (the labeling form's field and its
    value), ``choice`` (the same decision as one value, for the review and adjudication forms),
    caption, shortcut key, and whether it is the stored choice of ``label``."""
    if criterion.kind == Criterion.BINARY:
        items = [("verdict", MET, "1"), ("verdict", NOT_MET, "2"), ("verdict", CANNOT_ASSESS, "3")]
    else:
        items = [("option", o["label"], str(i + 1) if i < 9 else "") for i, o in enumerate(criterion.options)]
        items.append(("verdict", CANNOT_ASSESS, "c"))
    current = None
    if label is not None:
        current = choice_encode(verdict=label.verdict, option=label.option_label) or None
    buttons = []
    for name, value, key in items:
        choice = choice_encode(**{name: value})
        caption = verdict_caption(value) if name == "verdict" else value
        buttons.append({"name": name, "value": value, "choice": choice, "caption": caption, "key": key,
                        "pressed": current == choice})
    return buttons


@dataclass
class CriterionRow:
    """What one criterion row of the labeling page shows."""

    criterion: Criterion
    label: Label | None = None
    error: str = ""
    conflict: bool = False

    @property
    def number(self) -> int:
        return self.criterion.position + 1

    @property
    def revision(self) -> int:
        return self.label.revision if self.label else 0

    @property
    def choices(self) -> list[dict]:
        return choices_for(criterion=self.criterion, label=self.label)


def decision_display(label, *, none: str = "") -> str:
    """How pages show a label's (or an adjudication's) decision: the vocabulary's ``decision_text``;
    ``none`` for no label."""
    if label is None:
        return none
    return decision_text(verdict=label.verdict, option=label.option_label, value=label.value, none=none)


def labeling_page_data(*, assignment: Assignment) -> dict:
    """Everything the labeling page shows, in a fixed handful of queries whatever the rubric size."""
    criteria = criteria_for_response(response=assignment.response)
    labels = labels_by_criterion(response_id=assignment.response_id, annotator_id=assignment.annotator_id)
    rows = [CriterionRow(criterion=c, label=labels.get(c.pk)) for c in criteria]
    queue = list(
        Assignment.objects.filter(project_id=assignment.project_id, annotator_id=assignment.annotator_id)
        .order_by("position", "id")
        .values_list("pk", "status")
    )
    ids = [pk for pk, _ in queue]
    following = [pk for pk, status in queue[ids.index(assignment.pk) + 1:] if status in OPEN_STATUSES]
    return {
        "assignment": assignment,
        "project": assignment.project,
        "case": assignment.response.case,
        "response": assignment.response,
        "rows": rows,
        "decided": sum(1 for row in rows if row.label is not None),
        "total": len(rows),
        "read_only": assignment.status not in OPEN_STATUSES,
        "missing_evidence": evidence_missing(assignment=assignment),
        "queue_position": ids.index(assignment.pk) + 1,
        "queue_length": len(ids),
        "next_assignment_id": following[0] if following else None,
        "sentences": sentence_bank(assignment.response.text),
    }
