"""Quality control's reads: the screening accuracy of a case set, what the screening form
offers, the counts by state and everything the quality page shows."""
from django.db.models import Count, Q

from annotation.models import AuditEvent, Case, CaseQuality, Project, Response

from ..sources import Source, project_sources
from .rules import OUTCOMES, qc_model_names


def qc_screen_accuracy(*, project: Project, source: Source, models: list[str]) -> dict[int, float]:
    """{case pk: mean rubric accuracy (percent) over the responses of ``models`` that ``source``
    decided}; cases with no such response (or no binary criterion) are absent. Excluded cases
    are included: screening must see them again."""
    from grading import metrics  # lazy: pandas and the report code load on first use, not at start-up
    from grading.reports.coverage import response_hits_frame  # lazy: pandas and the report code load on first use, not at start-up
    from grading.reports.inputs import ReportInputs  # lazy: pandas and the report code load on first use, not at start-up

    inputs = ReportInputs(project, include_excluded=True)
    hits = response_hits_frame(inputs=inputs, source=source, author_kind=Response.MODEL)
    hits = hits[hits["model"].isin(models)]
    if hits.empty:
        return {}
    hits = hits.assign(case_id=inputs.responses.loc[hits["response_id"], "case_id"].to_numpy())
    per_case = metrics.coverage_by_stratum(hits, k=0, stratum="case_id", model=None)
    return {int(case_id): float(cov.rubric_accuracy_pct) for case_id, cov in per_case.items()}


def qc_screen_choices(*, project: Project) -> dict:
    """What the screening form offers: the project's sources (specs) and its models."""
    sources = project_sources(project=project)
    return {"sources": [s.spec for group in ("cohorts", "judges", "gold") for s in sources[group]],
            "models": qc_model_names(project=project)}


def qc_counts(*, project: Project) -> dict:
    """Counts of the project's cases by quality-control state (two queries)."""
    names = {"screened": Q(screen_accuracy_pct__isnull=False), "flagged": Q(flagged=True),
             "reinstated": Q(flagged=True, excluded=False), "sampled": Q(audit_sampled=True),
             "pending": Q(audit_sampled=True, audit_outcome=""), "excluded": Q(excluded=True),
             **{f"outcome_{o}": Q(audit_outcome=o) for o in OUTCOMES}}
    # aliases must not be field names ("flagged", "excluded"), hence the n_ prefix
    found = CaseQuality.objects.filter(project=project).aggregate(**{f"n_{k}": Count("id", filter=q) for k, q in names.items()})
    counts = {k: found[f"n_{k}"] for k in names if not k.startswith("outcome_")}
    counts["outcomes"] = {o: found[f"n_outcome_{o}"] for o in OUTCOMES}
    counts["cases"] = Case.objects.filter(project=project).count()
    return counts


def _last_event(*, project: Project, action: str) -> AuditEvent | None:
    return AuditEvent.objects.filter(project=project, action=action).select_related("actor").order_by("-created_at", "-pk").first()


def qc_lists(*, project: Project) -> dict:
    """The quality page's two lists, unevaluated (the page shows them a page at a time): the cases
    drawn for audit and the flagged cases, rows with their case and auditor, in case order."""
    rows = CaseQuality.objects.filter(project=project).select_related("case", "audit_by").order_by("case__position", "case_id")
    return {"sampled": rows.filter(audit_sampled=True), "flagged": rows.filter(flagged=True)}


def qc_summary(*, project: Project) -> dict:
    """What the quality page shows above its lists: counts, the last screening and draw."""
    return {
        "counts": qc_counts(project=project),
        "last_screen": _last_event(project=project, action="qc_screen"),
        "last_sample": _last_event(project=project, action="qc_audit_sample"),
        "outcomes": OUTCOMES,
    }
