"""Case quality control (ClinConsensus §3.4; issue 10, point 5; SPEC §5 ``qc_screen`` and
``qc_audit_sample``): which cases stay in the study.

*Screening* flags a case for exclusion when the chosen screening responses already cover its
rubric well: the mean, over those models' decided responses of the case, of their rubric accuracy
100 · s_i / N_i (SPEC §3 "Coverage", computed by ``grading.metrics.coverage`` so the definition
lives in one place) is at or above a threshold. The *audit sampler* draws a seeded share of the
cases still in for senior review, whose outcome is pass, revise or remove. A case is *excluded*
— left out of every report and of the export (``grading.reports.inputs``) — when it is flagged
and no manager reinstated it, or when the audit removed it.

The writes (``qc_screen``, ``qc_audit_sample``, ``qc_audit_record``, ``qc_reinstate``) lock the
``CaseQuality`` rows they change inside one transaction and leave one audit event each. The reads
(``qc_screen_choices``, ``qc_counts``, ``qc_summary``) feed the quality page and the project page.
pandas and the report code load on first use, so importing this module at start-up costs nothing.
"""
import math
import random

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import AuditEvent, Case, CaseQuality, Project, Response
from annotation.projects import audit_record

from .sources import Source, project_sources, source_parse

PASS, REVISE, REMOVE = CaseQuality.PASS, CaseQuality.REVISE, CaseQuality.REMOVE
OUTCOMES = (PASS, REVISE, REMOVE)
MAX_NOTE = 5000
# Means are sums of fractions s_i / N_i; compare with a little slack so that a mean that is
# exactly the threshold on paper (e.g. 1/3 and 2/3 of 50 %) is not lost to rounding.
TOLERANCE_PCT = 1e-9
SCREEN_FIELDS = ["screen_accuracy_pct", "screen_threshold_pct", "screen_source", "screen_models", "flagged", "excluded",
                 "updated_at"]


# --- argument checks -------------------------------------------------------------------------

def _number(value, *, name: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, not {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return number


def qc_threshold_clean(value) -> float:
    threshold = _number(value, name="threshold")
    if not 0 <= threshold <= 100:
        raise ValueError(f"threshold must be a percentage from 0 to 100, not {value!r}")
    return threshold


def qc_share_clean(value) -> float:
    share = _number(value, name="share")
    if not 0 < share <= 1:
        raise ValueError(f"share must be more than 0 and at most 1 (0.2 = 20 % of the cases), not {value!r}")
    return share


def qc_seed_clean(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"seed must be a whole number, not {value!r}")
    return value


def qc_model_names(*, project: Project) -> list[str]:
    """The source models of the project's model-authored responses, by name."""
    rows = Response.objects.filter(project=project, author_kind=Response.MODEL).order_by("model").values_list("model", flat=True)
    return list(rows.distinct())


def qc_models_clean(*, project: Project, models) -> list[str]:
    """The screening models named (a list, or "A,B,C"), without blanks and repeats, each a model
    with responses in the project; ValueError naming the unknown ones otherwise."""
    if isinstance(models, str):
        models = models.split(",")
    names = list(dict.fromkeys(str(m).strip() for m in models or () if str(m).strip()))
    if not names:
        raise ValueError("name at least one screening model (e.g. --models model-a,model-b,model-c)")
    known = qc_model_names(project=project)
    unknown = [m for m in names if m not in known]
    if unknown:
        raise ValueError(f"unknown model{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in project "
                         f"{project.slug!r} (models: {', '.join(known) or 'none'})")
    return names


def _note_clean(note, *, required_for: str | None) -> str:
    note = (note or "").strip()
    if required_for and not note:
        raise ValidationError({"note": f"a note is required to {required_for} (say what is wrong)"})
    if len(note) > MAX_NOTE:
        raise ValidationError({"note": f"a note can be at most {MAX_NOTE:,} characters"})
    return note


# --- screening -------------------------------------------------------------------------------

def qc_screen_accuracy(*, project: Project, source: Source, models: list[str]) -> dict[int, float]:
    """{case pk: mean rubric accuracy (percent) over the responses of ``models`` that ``source``
    decided}; cases with no such response (or no binary criterion) are absent. Excluded cases
    are included: screening must see them again."""
    from grading import metrics
    from grading.reports.coverage import response_hits_frame
    from grading.reports.inputs import ReportInputs

    inputs = ReportInputs(project, include_excluded=True)
    hits = response_hits_frame(inputs=inputs, source=source, author_kind=Response.MODEL)
    hits = hits[hits["model"].isin(models)]
    if hits.empty:
        return {}
    hits = hits.assign(case_id=inputs.responses.loc[hits["response_id"], "case_id"].to_numpy())
    per_case = metrics.coverage_by_stratum(hits, k=0, stratum="case_id", model=None)
    return {int(case_id): float(cov.rubric_accuracy_pct) for case_id, cov in per_case.items()}


def _rows_locked(*, project: Project, create_for: list[int]) -> dict[int, CaseQuality]:
    """Every CaseQuality row of the project by case pk, locked (``select_for_update``) until the
    caller's transaction ends, after creating the missing rows of ``create_for``. The insert
    ignores conflicts: when a concurrent writer created a row first, we lock and change theirs."""
    existing = set(CaseQuality.objects.filter(project=project).values_list("case_id", flat=True))
    missing = [CaseQuality(project=project, case_id=pk) for pk in create_for if pk not in existing]
    if missing:
        CaseQuality.objects.bulk_create(missing, ignore_conflicts=True, batch_size=500)
    return {row.case_id: row for row in CaseQuality.objects.select_for_update().filter(project=project)}


def qc_screen(*, project: Project, source: str, models, threshold_pct: float = 50.0, user=None) -> dict:
    """Screen the project's cases with ``models``' responses as decided by ``source``.

    Each screened case (one with a decided response of a screening model) gets its mean accuracy,
    the threshold, source and models, ``flagged`` = mean ≥ threshold, and ``excluded`` = flagged
    or removed by the audit — so a case that falls below the threshold again comes back, and a
    manager's reinstatement of a case that is still flagged is undone by a new screening. Cases not
    screened keep what they had. Returns the SPEC §5 result; ValueError / LookupError name a bad
    argument (threshold, source, unknown model)."""
    threshold = qc_threshold_clean(threshold_pct)
    # Only the project's own sources screen it; a prefixed one is refused before any other
    # project is looked up, so the error never reveals another project's cohorts or judges.
    src = source_parse(text=source, project=project, local_only=True)
    names = qc_models_clean(project=project, models=models)
    means = qc_screen_accuracy(project=project, source=src, models=names)
    cases = [(pk, ext) for pk, ext in Case.objects.filter(project=project).order_by("position", "pk")
             .values_list("pk", "external_id") if pk in means]
    flags = {pk: means[pk] >= threshold - TOLERANCE_PCT for pk, _ in cases}
    with transaction.atomic():
        rows = _rows_locked(project=project, create_for=[pk for pk, _ in cases])
        before = {"flagged": sum(rows[pk].flagged for pk, _ in cases), "excluded": sum(rows[pk].excluded for pk, _ in cases)}
        now = timezone.now()
        for pk, _ in cases:
            row = rows[pk]
            row.screen_accuracy_pct, row.screen_threshold_pct = means[pk], threshold
            row.screen_source, row.screen_models = src.spec, names
            row.flagged = flags[pk]
            row.excluded = row.flagged or row.audit_outcome == REMOVE
            row.updated_at = now  # bulk_update skips auto_now; the report fingerprint reads updated_at
        CaseQuality.objects.bulk_update([rows[pk] for pk, _ in cases], SCREEN_FIELDS, batch_size=500)
        after = {"flagged": sum(flags.values()), "excluded": sum(rows[pk].excluded for pk, _ in cases)}
        audit_record(project=project, actor=user, action="qc_screen", target=project.slug,
                     before=before, after={**after, "n_cases": len(cases), "threshold_pct": threshold,
                                           "source": src.spec, "models": names},
                     note=f"{len(cases)} cases screened with {src.spec} ({', '.join(names)}); "
                          f"{after['flagged']} at or above {threshold:g} %")
    return {
        "threshold": threshold,
        "n_cases": len(cases),
        "flagged": [ext for pk, ext in cases if flags[pk]],
        "by_case": {ext: means[pk] for pk, ext in cases},
    }


# --- audit -----------------------------------------------------------------------------------

def qc_audit_sample(*, project: Project, share: float = 0.2, seed: int = 0, user=None) -> dict:
    """Draw round(share · n) of the n cases that are not excluded (at least one), with
    ``random.Random(seed)`` over the cases in case order, and mark them for audit. Earlier draws
    and their outcomes stay as they are (a case may be drawn again)."""
    share, seed = qc_share_clean(share), qc_seed_clean(seed)
    with transaction.atomic():
        rows = _rows_locked(project=project, create_for=[])
        excluded = {pk for pk, row in rows.items() if row.excluded}
        ordered = [(pk, ext) for pk, ext in Case.objects.filter(project=project).order_by("position", "pk")
                   .values_list("pk", "external_id") if pk not in excluded]
        size = min(len(ordered), max(1, round(share * len(ordered)))) if ordered else 0
        drawn = sorted(random.Random(seed).sample(range(len(ordered)), size))
        chosen = [ordered[i] for i in drawn]
        rows = _rows_locked(project=project, create_for=[pk for pk, _ in chosen])
        now = timezone.now()
        for pk, _ in chosen:
            rows[pk].audit_sampled, rows[pk].updated_at = True, now
        CaseQuality.objects.bulk_update([rows[pk] for pk, _ in chosen], ["audit_sampled", "updated_at"], batch_size=500)
        cases = [ext for _, ext in chosen]
        audit_record(project=project, actor=user, action="qc_audit_sample", target=project.slug,
                     after={"cases": cases, "share": share, "seed": seed, "n_eligible": len(ordered)},
                     note=f"{len(cases)} of {len(ordered)} cases drawn for audit (share {share:g}, seed {seed})")
    return {"cases": cases, "share": share, "seed": seed, "n_eligible": len(ordered)}


def _audit_state(row: CaseQuality) -> dict:
    return {"outcome": row.audit_outcome or None, "note": row.audit_note, "excluded": row.excluded,
            "by": row.audit_by.username if row.audit_by_id else None}


@transaction.atomic
def qc_audit_record(*, case: Case, outcome: str, note: str, user) -> CaseQuality:
    """Record the senior audit's outcome of a case drawn for audit (the row is locked first).

    revise and remove need a note. remove excludes the case; changing a removal to pass or revise
    brings the case back unless the screening flags it. The caller has checked the user's role
    (``annotation.access``). ValidationError names what is wrong."""
    if outcome not in OUTCOMES:
        raise ValidationError({"outcome": f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}"})
    note = _note_clean(note, required_for=f"{outcome} a case" if outcome in (REVISE, REMOVE) else None)
    row = CaseQuality.objects.select_for_update().filter(case=case).first()
    if row is None or not row.audit_sampled:
        raise ValidationError({"case": f"case {case.external_id!r} was not drawn for audit; draw an audit sample first"})
    before = _audit_state(row)
    if outcome == REMOVE:
        excluded = True
    elif row.audit_outcome == REMOVE:
        excluded = row.flagged
    else:
        excluded = row.excluded
    if (row.audit_outcome, row.audit_note, row.excluded) == (outcome, note, excluded):
        return row
    row.audit_outcome, row.audit_note, row.excluded = outcome, note, excluded
    row.audit_by, row.audit_at = (user if getattr(user, "pk", None) else None), timezone.now()
    row.save(update_fields=["audit_outcome", "audit_note", "audit_by", "audit_at", "excluded", "updated_at"])
    audit_record(project=case.project, actor=user, action="qc_audit", target=case.external_id,
                 before=before, after=_audit_state(row), note=note)
    return row


@transaction.atomic
def qc_reinstate(*, case: Case, user, note: str) -> CaseQuality:
    """A manager keeps a case the screening flagged: ``excluded`` becomes False while ``flagged``
    stays True for the record (a new screening that flags it again excludes it again). Needs a
    note; refused for a case that is not flagged, already reinstated, or removed by the audit."""
    note = _note_clean(note, required_for="reinstate a flagged case")
    row = CaseQuality.objects.select_for_update().filter(case=case).first()
    if row is None or not row.flagged:
        raise ValidationError({"case": f"case {case.external_id!r} is not flagged by the screening"})
    if row.audit_outcome == REMOVE:
        raise ValidationError({"case": f"case {case.external_id!r} was removed by the audit; record another outcome "
                                       "to bring it back"})
    if not row.excluded:
        raise ValidationError({"case": f"case {case.external_id!r} is already reinstated"})
    row.excluded = False
    row.save(update_fields=["excluded", "updated_at"])
    audit_record(project=case.project, actor=user, action="qc_reinstate", target=case.external_id,
                 before={"excluded": True, "flagged": True}, after={"excluded": False, "flagged": True}, note=note)
    return row


# --- reads -----------------------------------------------------------------------------------

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


def qc_summary(*, project: Project) -> dict:
    """Everything the quality page shows: counts, the last screening and draw, the cases drawn
    for audit and the flagged cases (rows with their case and auditor), in case order."""
    rows = CaseQuality.objects.filter(project=project).select_related("case", "audit_by").order_by("case__position", "case_id")
    return {
        "counts": qc_counts(project=project),
        "last_screen": _last_event(project=project, action="qc_screen"),
        "last_sample": _last_event(project=project, action="qc_audit_sample"),
        "sampled": list(rows.filter(audit_sampled=True)),
        "flagged": list(rows.filter(flagged=True)),
        "outcomes": OUTCOMES,
    }
