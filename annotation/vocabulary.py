"""The decision vocabulary, in one place: the verdict names and the words pages show for them,
the gold provenance names (SPEC §4 ``gold.jsonl``) and their words, how a decision is shown
(``decision_text``), and how a decision travels as one form or button value (``choice_encode``,
read back by ``choice_parse``).

Pure Python, importing nothing of Django or of the apps, so every layer may use it: models (their
field choices), forms, pages, the exporter, the API serializers, and — by the one exception the
``metrics-pure`` contract in ``.importlinter`` allows — ``grading.metrics``. The stored values are
the names below; changing one is a data migration, not an edit here.
"""
import math

# -- verdicts (binary criteria; cannot_assess is allowed for every kind) ---------------------------
MET, NOT_MET, CANNOT_ASSESS = "met", "not_met", "cannot_assess"
VERDICTS = (MET, NOT_MET, CANNOT_ASSESS)
VERDICT_WORDS = {MET: "met", NOT_MET: "not met", CANNOT_ASSESS: "cannot assess"}
VERDICT_CHOICES = list(VERDICT_WORDS.items())  # model and form field choices: (stored name, word)

# -- provenance of a gold decision (SPEC §2 "Adjudication", §4 gold.jsonl) -------------------------
AGREED, ADJUDICATED, SINGLE_COHORT, UNRESOLVED = "agreed", "adjudicated", "single-cohort", "unresolved"
PROVENANCES = (AGREED, ADJUDICATED, SINGLE_COHORT, UNRESOLVED)  # in this order in the export's counts
PROVENANCE_WORDS = {AGREED: "agreed", ADJUDICATED: "adjudicated", SINGLE_COHORT: "single cohort", UNRESOLVED: "unresolved"}

# -- how pages show a decision ---------------------------------------------------------------------
INVALID = "invalid"  # a judge decision with nothing but missing or malformed outputs behind it


def _given(value) -> bool:
    """Whether a decision field holds something: None, "" and NaN (pandas' missing value) do not."""
    return value is not None and value != "" and not (isinstance(value, float) and math.isnan(value))


def decision_text(*, verdict=None, option=None, value=None, unresolved: bool = False, invalid: int = 0,
                  none: str = "") -> str:
    """How every page shows one decision: the option label; else the verdict's word ("not met");
    else "value 7.5"; with no decision, "unresolved" for a tie, "invalid" for invalid outputs
    only, and ``none`` otherwise (a page passes "undecided" or "—" where it says so).
    An option wins over a value because an option decision carries its option's value too."""
    if _given(option):
        return str(option)
    if _given(verdict):
        return VERDICT_WORDS.get(verdict, str(verdict).replace("_", " "))
    if _given(value):
        return f"value {float(value):g}"
    if unresolved:
        return UNRESOLVED
    return INVALID if invalid else none


def verdict_caption(verdict: str) -> str:
    """A verdict's word as a button caption: "Not met"."""
    word = VERDICT_WORDS[verdict]
    return word[:1].upper() + word[1:]


# -- a decision as one form or button value --------------------------------------------------------


class DecisionError(ValueError):
    """A decision that does not fit its criterion; ``field`` names the offending field."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def choice_encode(*, verdict=None, option=None, value=None) -> str:
    """One decision as the value of a decision button or ``choice`` field: "verdict:met",
    "option:<label>" or "value:7.5" ("" for no decision); ``choice_parse`` reads it back. The
    value is written with ``repr``, the shortest text that reads back as the same float."""
    if _given(option):
        return f"option:{option}"
    if _given(verdict):
        return f"verdict:{verdict}"
    if _given(value):
        return f"value:{float(value)!r}"
    return ""


def choice_parse(raw: str, *, values: bool = False) -> dict:
    """A decision button's value as a decision's keyword arguments: "verdict:met" →
    ``{"verdict": "met"}``, "option:<label>" → ``{"option_label": label}`` and, where ``values``
    are offered (adjudication of ordinal criteria), "value:7.5" → ``{"value": 7.5}``; "" → {}.
    Anything else raises ``DecisionError`` on "choice"."""
    if not raw:
        return {}
    kind, _, value = raw.partition(":")
    if kind == "verdict" and value in VERDICTS:
        return {"verdict": value}
    if kind == "option" and value:
        return {"option_label": value}
    if kind == "value" and values:
        try:
            return {"value": float(value)}  # a number; whether it fits the criterion is decision_validate's rule
        except ValueError:
            pass
    raise DecisionError("choice", "choose one of the offered decisions")
