"""The few-shot split of a judge (issue 14, point 6): the cases its few-shot examples may come
from, and that every report of the judge therefore leaves out (an example's own label must never
count as the judge's agreement).

The split is ``few_shot.split`` in the judge's settings: ``{"share": x}``, a seeded share of the
project's cases (those first in a permutation of the case ids by ``numpy.random.default_rng`` with
the few-shot seed; at least one case), or ``{"cases": [ids]}``, named cases. A judge without
few-shot examples has no split.
"""
import numpy as np

from annotation.models import Case

from .settings import judge_settings_parse


def fewshot_split_cases(judge) -> frozenset[int]:
    """The pks of the cases of ``judge``'s few-shot split (empty without few-shot examples)."""
    try:
        settings = judge_settings_parse(judge.settings)
    except ValueError:
        return frozenset()
    split = settings.few_shot_split
    if not settings.few_shot_k or not split:
        return frozenset()
    cases = dict(Case.objects.filter(project_id=judge.project_id).values_list("external_id", "pk"))
    if "cases" in split:
        return frozenset(cases[c] for c in split["cases"] if c in cases)
    ids = sorted(cases)
    if not ids:
        return frozenset()
    n = max(1, int(round(split["share"] * len(ids))))
    order = np.random.default_rng(settings.few_shot_seed & (2**64 - 1)).permutation(len(ids))  # negative seeds too
    return frozenset(cases[ids[i]] for i in order[:n])
