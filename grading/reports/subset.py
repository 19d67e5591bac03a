"""Model subsets of reports (issue 14, point 4): every report command (``--models``,
``--exclude-models``) and page (``?models=``, ``?exclude_models=``) can be restricted to some
source models, e.g. the held-out models ClinConsensus scores its judges on.

The subset is active for the duration of one computation (``model_subset``, a context
variable): ``ReportInputs`` keeps only the responses of the kept models, so every figure is
computed from them alone, and the report cache keys the subset, so a restricted result is never
served for an unrestricted request. Results say which models were asked for and used.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_ACTIVE: ContextVar[ModelSubset | None] = ContextVar("evalsite_model_subset", default=None)


@dataclass(frozen=True)
class ModelSubset:
    models: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def keeps(self, model: str) -> bool:
        return (not self.models or model in self.models) and model not in self.exclude

    def key(self) -> dict:
        return {"models": list(self.models), "exclude_models": list(self.exclude)}


def _names(value) -> tuple[str, ...]:
    if value is None:
        return ()
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(sorted({p.strip() for p in parts if p and p.strip()}))


def subset_parse(models=None, exclude=None) -> ModelSubset | None:
    """A subset from comma-separated names (or lists); None when neither is given."""
    subset = ModelSubset(_names(models), _names(exclude))
    if not subset.models and not subset.exclude:
        return None
    if set(subset.models) & set(subset.exclude):
        raise ValueError(f"a model is both kept and excluded: {', '.join(sorted(set(subset.models) & set(subset.exclude)))}")
    return subset


def active_subset() -> ModelSubset | None:
    return _ACTIVE.get()


@contextmanager
def model_subset(subset: ModelSubset | None):
    token = _ACTIVE.set(subset)
    try:
        yield subset
    finally:
        _ACTIVE.reset(token)


def subset_summary(subset: ModelSubset | None, models_present) -> dict | None:
    """What a result says about its subset: the models asked for, excluded, and used."""
    if subset is None:
        return None
    return {**subset.key(), "used": sorted(str(m) for m in set(models_present) if subset.keeps(str(m)))}
