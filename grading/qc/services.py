"""Quality control's writes: screening, the audit draw, an audit outcome, a reinstatement.
Each locks the ``CaseQuality`` rows it changes inside one transaction and leaves one audit event."""
import random

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Case, CaseQuality, Project
from annotation.projects import audit_record

from ..sources import source_parse
from .rules import (
    OUTCOMES,
    REMOVE,
    REVISE,
    SCREEN_FIELDS,
    TOLERANCE_PCT,
    note_clean,
    qc_models_clean,
    qc_seed_clean,
    qc_share_clean,
    qc_threshold_clean,
)
from .selectors import qc_screen_accuracy


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
    note = note_clean(note, required_for=f"{outcome} a case" if outcome in (REVISE, REMOVE) else None)
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
    note = note_clean(note, required_for="reinstate a flagged case")
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
