"""The judges' call types: one (response, criterion) ``Item`` to judge, a ``Call`` of it for one
sample, and the criterion text a call shows. A leaf module (no Django, no other judge module),
so the planner (``plan``), compiled mode (``compiled``) and the backends all import it and
none of them imports another for its types.
"""
from dataclasses import dataclass

from .settings import JudgeSettings


@dataclass(frozen=True)
class Item:
    """One (response, criterion) pair to judge."""

    response_pk: int
    response_text: str
    model: str
    case_pk: int
    criterion_pk: int
    criterion_text: str
    kind: str
    options: list
    min_evidence: int
    rubric_version_id: int
    checklist_of: str = ""  # the trait a checklist item scores (compiled mode groups by it)
    variants: dict | None = None  # alternative texts for rubric-perturbation runs ({"paraphrased": ...})


@dataclass(frozen=True)
class Call:
    item: Item
    sample: int

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.item.response_pk, self.item.criterion_pk, self.sample)


def criterion_text(item: Item, settings: JudgeSettings) -> str:
    """The criterion as the judge reads it: its paraphrase in a ``paraphrased`` run (the text
    itself where the bundle gave none), else its text."""
    if settings.variant == "paraphrased":
        return (item.variants or {}).get("paraphrased") or item.criterion_text
    return item.criterion_text
