"""The write path of score calibration (the ``calibrate`` command; SPEC §3 "Score calibration"):
fit the calibration (``reports.calibrated.calibration_fit``, which only reads) and store the
calibrated held-out scores as the judgments of the derived judge ``NAME@calibrated``.
"""
import pandas as pd
from django.db import transaction

from annotation.models import Criterion
from grading.models import Judge, Judgment
from grading.reports.calibrated import calibration_fit
from grading.reports.inputs import ReportInputs
from grading.sources import project_get, source_parse

SUFFIX = "@calibrated"


def judge_calibrate(*, project, source: str, reference: str, criterion: str | None = None,
                    calibration_size: int | None = None, seed: int = 0, ci: bool = False) -> dict:
    """Calibrate a judge against a reference and store ``judge:NAME@calibrated``. Not cached: it writes."""
    project = project if not isinstance(project, str) else project_get(slug=project)
    src, ref = source_parse(text=source, project=project), source_parse(text=reference, project=project)
    if calibration_size is not None and calibration_size < 1:
        raise ValueError("the calibration size must be at least 1")
    inputs = ReportInputs(project)
    summary, intervals, hold = calibration_fit(inputs=inputs, source=src, reference=ref, criterion=criterion,
                                               calibration_size=calibration_size, seed=seed, ci=ci)
    derived = calibrated_judge_store(judge=src.obj, hold=hold, summary=summary)
    return {**summary, **intervals, "source": f"judge:{derived.name}",
            "n_excluded_cases": inputs.n_excluded_cases, "n_draft_labels": inputs.n_draft_labels}


@transaction.atomic
def calibrated_judge_store(*, judge: Judge, hold: pd.DataFrame, summary: dict) -> Judge:
    """The derived judge and its judgments: one per held-out item, its calibrated option (the rows
    of an earlier calibration of the same judge are replaced)."""
    derived, _ = Judge.objects.update_or_create(
        project=judge.project, name=f"{judge.name}{SUFFIX}",
        defaults={"backend": Judge.CALIBRATED, "model": judge.model, "condition": judge.condition, "samples": 1,
                  "settings": {"calibration": summary}},
    )
    Judgment.objects.filter(judge=derived).delete()
    criteria = {c.pk: c for c in Criterion.objects.filter(pk__in=set(hold["criterion"]))}
    note = (f"calibrated from {judge.name} (raw score {{raw:g}}, {{invalid:g}} invalid citations) against "
            f"{summary['reference']} on {summary['n_calibration']} items")
    rows = []
    for r, c, raw, invalid, value in hold[["response", "criterion", "score", "invalid", "calibrated"]].itertuples(index=False):
        criterion = criteria[int(c)]
        option = next((o for o in criterion.options if not o.get("na") and float(o["value"]) == float(value)), None)
        rows.append(Judgment(
            judge=derived, response_id=int(r), criterion=criterion, rubric_version_id=criterion.rubric_version_id, sample=0,
            condition=judge.condition, option_label=option["label"] if option else None, value=float(value), valid=True,
            explanation=note.format(raw=raw, invalid=invalid), raw="",
        ))
    Judgment.objects.bulk_create(rows, batch_size=2000)
    return derived
