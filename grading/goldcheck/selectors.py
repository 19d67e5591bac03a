"""Reads of annotator quality: which responses may be check items, and each annotator's figures.

Every figure comes from ``grading.metrics.raters``; gold from ``grading.selectors.gold_decision_frame``
(the gold every page uses); the cohort's decisions from ``label_rows`` and the cohort rule, so only
final labels count (``annotation.selectors.final``: check labels never do).
"""
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.utils import timezone

from annotation.models import Assignment, CaseQuality, Cohort, CohortMembership, Label, Project, Response
from annotation.selectors.final import FINAL_STATUSES
from annotation.vocabulary import choice_encode

from ..metrics.raters import CheckItem, GoldQuality, gold_quality, nominal_kappa, seconds_summary


def gold_response_ids(*, project: Project) -> set[int]:
    """Responses with at least one gold decision, of cases quality control kept: what a check item may be."""
    from ..selectors import gold_decision_frame  # lazy: with the page (the decision frames bring pandas)
    gold = gold_decision_frame(project=project)
    ids = set(int(r) for r in gold["response_id"].unique())
    excluded = set(CaseQuality.objects.filter(project=project, excluded=True).values_list("case_id", flat=True))
    if excluded and ids:
        ids -= set(Response.objects.filter(pk__in=ids, case_id__in=excluded).values_list("pk", flat=True))
    return ids


def _code(verdict, option, value) -> str:
    return choice_encode(verdict=verdict, option=option, value=value)


@dataclass
class AnnotatorQuality:
    """One annotator's row of the quality page and API."""

    user_id: int
    username: str
    cohort: str
    gold: GoldQuality
    kappa: float | None = None
    kappa_n: int = 0
    items_submitted: int = 0
    median_seconds: float | None = None
    mean_seconds: float | None = None
    drift_items: list[int] = field(default_factory=list)

    @property
    def alert(self) -> bool:
        return self.gold.alert

    def as_json(self) -> dict:
        g = self.gold
        return {
            "annotator": self.username, "cohort": self.cohort,
            "check_items": g.n_items, "check_decisions": g.n_decisions, "agreement": g.agreement,
            "window_items": g.window_items, "window_agreement": g.window_agreement,
            "drift": [{"item": i, "agreement": a} for i, a in zip(self.drift_items, g.drift)],
            "kappa_with_cohort": self.kappa, "kappa_n": self.kappa_n,
            "items_submitted": self.items_submitted, "median_seconds": self.median_seconds,
            "mean_seconds": self.mean_seconds, "alert": g.alert, "alert_reason": g.alert_reason,
        }


def _check_items(*, project: Project, annotator_ids, submitted_before=None) -> dict[int, list[CheckItem]]:
    """Each annotator's submitted check items in submission order, scored against gold."""
    from ..selectors import ITEM, gold_decision_frame  # lazy: with the page (the decision frames bring pandas)
    checks = Assignment.objects.filter(project=project, is_check=True, status__in=FINAL_STATUSES,
                                       annotator_id__in=list(annotator_ids))
    if submitted_before is not None:
        checks = checks.filter(submitted_at__lt=submitted_before)
    checks = list(checks.order_by("submitted_at", "pk").values_list("pk", "annotator_id", "response_id"))
    if not checks:
        return {}
    gold = gold_decision_frame(project=project, response_ids={r for _, _, r in checks})
    gold_by_response = defaultdict(dict)
    for response_id, criterion_id, verdict, option, value in gold[[*ITEM, "verdict", "option", "value"]].itertuples(
            index=False, name=None):
        gold_by_response[int(response_id)][int(criterion_id)] = _code(verdict, option, value)
    given = defaultdict(dict)
    for assignment_id, criterion_id, verdict, option, value in Label.objects.filter(
            assignment_id__in=[pk for pk, _, _ in checks]).order_by().values_list(
            "assignment_id", "criterion_id", "verdict", "option_label", "value"):
        given[assignment_id][criterion_id] = _code(verdict, option, value)
    items = defaultdict(list)
    for pk, annotator_id, response_id in checks:
        reference = gold_by_response.get(response_id, {})
        if not reference:
            continue  # gold withdrawn since it was seeded: nothing to compare
        hits = sum(1 for criterion_id, code in reference.items() if given[pk].get(criterion_id) == code)
        items[annotator_id].append(CheckItem(hits=hits, total=len(reference)))
    return items


def _kappas(*, project: Project, cohort_members: dict[int, list[int]]) -> dict[int, tuple[float | None, int]]:
    """Each annotator's kappa with the decision of the rest of their cohort (their own labels left
    out, so they do not agree with themselves) on the regular items they labelled: {user: (kappa, n)}."""
    from ..metrics.decisions import cohort_decide  # lazy: with the page (the decision frames bring pandas)
    from ..selectors import ITEM, label_rows  # lazy: with the page (the decision frames bring pandas)

    out = {}
    for cohort in Cohort.objects.filter(project=project, pk__in=list(cohort_members)):
        rows = label_rows(project=project, cohort=cohort)
        if rows.empty:
            continue
        for user_id in cohort_members[cohort.pk]:
            own = rows[(rows["rater"] == user_id) & (rows["role"] == CohortMembership.ANNOTATOR)]
            if own.empty:
                out[user_id] = (None, 0)
                continue
            others = rows[(rows["rater"] != user_id) & rows["response_id"].isin(set(own["response_id"]))]
            decided = cohort_decide(others, keys=ITEM) if len(others) else None
            if decided is None or decided.empty:
                out[user_id] = (None, 0)
                continue
            decided = decided[~decided["unresolved"].astype(bool)]
            pairs = own.merge(decided, on=ITEM, suffixes=("", "_cohort"))
            a = [_code(v, o, x) for v, o, x in pairs[["verdict", "option", "value"]].itertuples(index=False, name=None)]
            b = [_code(v, o, x) for v, o, x in
                 pairs[["verdict_cohort", "option_cohort", "value_cohort"]].itertuples(index=False, name=None)]
            out[user_id] = (nominal_kappa(a, b), len(a))
    return out


def _seconds(*, project: Project, annotator_ids) -> dict[int, list[float]]:
    seconds = defaultdict(list)
    for user_id, value in Assignment.objects.filter(project=project, annotator_id__in=list(annotator_ids),
                                                    status__in=FINAL_STATUSES).order_by().values_list(
            "annotator_id", "active_seconds"):
        seconds[user_id].append(float(value))
    return seconds


def _quality(project: Project, items: list[CheckItem]) -> GoldQuality:
    return gold_quality(items, window=project.check_window, threshold=project.check_alert_threshold,
                        min_items=project.check_min_items)


def annotator_quality(*, project: Project) -> list[AnnotatorQuality]:
    """Every annotator of the project's cohorts (cohort order, then user name) with their figures."""
    members = list(CohortMembership.objects.filter(project=project, role=CohortMembership.ANNOTATOR)
                   .select_related("user", "cohort").order_by("cohort__position", "cohort__name", "user__username"))
    ids = [m.user_id for m in members]
    items = _check_items(project=project, annotator_ids=ids)
    by_cohort = defaultdict(list)
    for m in members:
        by_cohort[m.cohort_id].append(m.user_id)
    kappas = _kappas(project=project, cohort_members=by_cohort)
    seconds = _seconds(project=project, annotator_ids=ids)
    rows = []
    for m in members:
        own = items.get(m.user_id, [])
        kappa, n = kappas.get(m.user_id, (None, 0))
        median, mean = seconds_summary(seconds.get(m.user_id, []))
        rows.append(AnnotatorQuality(
            user_id=m.user_id, username=m.user.username, cohort=m.cohort.name, gold=_quality(project, own),
            kappa=kappa, kappa_n=n, items_submitted=len(seconds.get(m.user_id, [])), median_seconds=median,
            mean_seconds=mean, drift_items=list(range(1, len(own) + 1))))
    return rows


def check_counts(*, project: Project) -> dict:
    """Check items of the project by state, and the responses that may be check items."""
    checks = Assignment.objects.filter(project=project, is_check=True)
    return {"seeded": checks.count(), "submitted": checks.filter(status__in=FINAL_STATUSES).count()}


FEEDBACK_STEP = 5  # the number of reference items an annotator is told, rounded down to a multiple of this


def feedback_cutoff() -> dt.datetime:
    """The start of today (the site's time zone): feedback counts the items submitted before it."""
    now = timezone.localtime()
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def annotator_feedback(*, project: Project, user) -> dict:
    """An annotator's own agreement with reference answers, when the project allows it: 404 for a
    user who annotates nothing in the project, 403 when feedback is off. It counts only items
    submitted before today and says the number of them rounded down, so the figure never moves
    with one item and cannot tell which item was a check."""
    membership = CohortMembership.objects.filter(project=project, user_id=user.pk,
                                                 role=CohortMembership.ANNOTATOR).first()
    if membership is None:
        raise Http404("You annotate nothing in this project")
    if not project.check_feedback:
        raise PermissionDenied("This project does not show annotators their feedback")
    cutoff = feedback_cutoff()
    items = _check_items(project=project, annotator_ids=[user.pk], submitted_before=cutoff).get(user.pk, [])
    quality = _quality(project, items)
    enough = quality.n_items >= max(1, project.check_min_items)
    return {
        "as_of": cutoff.date().isoformat(),
        "enough": enough,
        "reference_items_at_least": (quality.n_items // FEEDBACK_STEP) * FEEDBACK_STEP,
        "agreement": round(quality.agreement, 2) if enough and quality.agreement is not None else None,
        "recent_agreement": (round(quality.window_agreement, 2)
                             if enough and quality.window_agreement is not None else None),
        "threshold": project.check_alert_threshold,
        "below_threshold": bool(enough and quality.alert),
    }
