"""The decision rules of SPEC §2 and §3, in one package. Every page, command, API view, prompt
builder and exporter gets a source's decisions from these functions (through
``grading.selectors``, which only loads the rows), so no reader re-derives a rule:

- ``cohort_decide``: the cohort decision — the checker's label if there is one; else the
  single annotator's label; else the majority of the annotators' labels; a tie is unresolved
  (and counts as a disagreement). ``cohort_votes``: the labels behind it.
- ``samples_decide``: a judge's decision over its Monte Carlo samples — the majority for
  binary and nominal criteria (a tie is unresolved), the mean value for ordinal ones. A
  missing or unparseable output is counted invalid, and on a binary criterion it is a
  not-met vote (SPEC §3); on other criteria it is no vote.
- ``missing_outputs``: an item a judge left without output inside a response it judged is an
  invalid output too: not met on a binary criterion.
- ``panel_decide``: a panel's decision over its member judges' decisions by the panel's
  vote rule (SPEC §3 "Ensemble vote"); ordinal criteria take the (weighted) mean value.
- ``gold_decide``: the gold decision of an item and its provenance, from the cohort
  decisions and the adjudications.
The package's modules: ``core`` (the decision columns, ``SourceDecision``, vote coding and
counting), ``cohorts``, ``judges`` (samples, missing outputs, panels) and ``gold``.
A decision's value and the rescaling to [0, 1] are in ``values`` (``numeric_values``,
``unit_scale``, ``unit_bounds``).

Decisions are typed columns, never encoded strings: ``verdict`` (met / not_met /
cannot_assess, or None), ``option`` (an option label, or None), ``value`` (the option's
value or the ordinal value, NaN otherwise), ``unresolved`` (a tie: no decision), ``invalid``
(judge outputs behind the decision that were missing or malformed) and ``n`` (labels or
samples behind it). One decision as a Python value is a ``SourceDecision``. Votes compare
the whole decision: an option and a bare value equal to that option's value are different
votes, as a label with a value states something other than a chosen option.
"""

from .cohorts import cohort_decide, cohort_votes
from .core import BINARY, DECISION_COLUMNS, NOMINAL, ORDINAL, SourceDecision, decision_fields
from .gold import gold_decide
from .judges import judge_outputs, missing_outputs, panel_agreement, panel_decide, samples_decide

__all__ = [
    "BINARY", "DECISION_COLUMNS", "NOMINAL", "ORDINAL", "SourceDecision", "cohort_decide", "cohort_votes",
    "decision_fields", "gold_decide", "judge_outputs", "missing_outputs", "panel_agreement", "panel_decide",
    "samples_decide",
]
