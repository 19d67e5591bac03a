"""Quality control's vocabulary and argument checks: the audit outcomes and the cleaning of
what a manager typed (threshold, share, seed, models, note), each refusal naming the field."""
import math

from django.core.exceptions import ValidationError

from annotation.models import CaseQuality, Project, Response

PASS, REVISE, REMOVE = CaseQuality.PASS, CaseQuality.REVISE, CaseQuality.REMOVE
OUTCOMES = (PASS, REVISE, REMOVE)
MAX_NOTE = 5000
# Means are sums of fractions s_i / N_i; compare with a little slack so that a mean that is
# exactly the threshold on paper (e.g. 1/3 and 2/3 of 50 %) is not lost to rounding.
TOLERANCE_PCT = 1e-9
SCREEN_FIELDS = ["screen_accuracy_pct", "screen_threshold_pct", "screen_source", "screen_models", "flagged", "excluded",
                 "updated_at"]


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


def note_clean(note, *, required_for: str | None) -> str:
    note = (note or "").strip()
    if required_for and not note:
        raise ValidationError({"note": f"a note is required to {required_for} (say what is wrong)"})
    if len(note) > MAX_NOTE:
        raise ValidationError({"note": f"a note can be at most {MAX_NOTE:,} characters"})
    return note


# --- screening -------------------------------------------------------------------------------
