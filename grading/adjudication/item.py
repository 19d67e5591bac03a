"""What the adjudication page of one response shows (issue 10, point 3): per criterion, each
cohort's decision with every annotator's and the checker's verdict, rationale and quotes, every
judge's decision, explanation and evidence, the gold state (provenance, the adjudication so far)
and whether the cohorts dispute it; and the response text with every rater's valid quotes
highlighted. The decisions come from the same rules as everywhere (``side_by_side`` and the
gold rule of ``grading.metrics.decisions``), restricted to this response.
"""
import html
import re
from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.safestring import mark_safe

from annotation.markdown import markdown_render
from annotation.models import Criterion, Label, Response
from annotation.selectors import choices_for, labels_final
from annotation.vocabulary import AGREED, PROVENANCE_WORDS, UNRESOLVED, decision_text

from ..judges.parsing import evidence_valid_quotes
from ..judges.selectors import Cell, Column, side_by_side
from ..models import Adjudication

CATEGORY_KEYS = {"a": "rubric_ambiguity", "i": "implicit_content", "s": "annotator_slip", "j": "judge_error", "o": "other"}


@dataclass
class RaterVerdict:
    name: str
    role: str
    decision: str
    rationale: str
    quotes: list[tuple[str, bool]]  # (quote, found verbatim in the response)


@dataclass
class CohortVerdicts:
    name: str
    cell: Cell  # the cohort's decision (its rule), as the side-by-side page shows it
    raters: list[RaterVerdict] = field(default_factory=list)


@dataclass
class AdjudicationRow:
    criterion: Criterion
    disputed: bool
    provenance: str
    cohorts: list[CohortVerdicts]
    judges: list[tuple[Column, Cell]]
    adjudication: Adjudication | None = None
    error: str = ""
    save_url: str = ""  # where its form posts

    @property
    def number(self) -> int:
        return self.criterion.position + 1

    @property
    def provenance_text(self) -> str:
        return PROVENANCE_WORDS.get(self.provenance, self.provenance)

    @property
    def agreed(self) -> bool:
        return self.provenance == AGREED

    @property
    def revision(self) -> int:
        return self.adjudication.revision if self.adjudication else 0

    # The form's current values, "" before any adjudication (a template lookup through None
    # raises and catches three exceptions; thirty rows of ten such lookups showed in the timing).
    @property
    def confidence(self) -> str:
        return self.adjudication.confidence if self.adjudication else ""

    @property
    def category(self) -> str:
        return self.adjudication.category if self.adjudication else ""

    @property
    def note(self) -> str:
        return self.adjudication.note if self.adjudication else ""

    @property
    def choices(self) -> list[dict]:
        return choices_for(criterion=self.criterion, label=self.adjudication)

    @property
    def open(self) -> bool:
        """Shown open: disputed, or already decided by an adjudicator; agreed ones start collapsed."""
        return self.disputed or self.adjudication is not None


def _highlight(rendered: str, quotes: list[tuple[str, int, str]]) -> str:
    """``rendered`` (sanitized HTML) with each quote marked where it appears inside one text run.
    ``quotes``: (text, criterion pk, source class): each mark names the criteria that quote it
    (``data-criteria``, so the page shows only the focused criterion's quotes) and takes the class
    of its source (``quote-cohort-N`` per cohort, ``quote-judge``; ``quote-many`` when several
    quote it). Quotes are escaped the way the renderer escapes text, and only text between tags
    is searched, so a quote can never inject markup."""
    found: dict[str, tuple[set, set]] = {}
    for text, criterion, source in quotes:
        if text and text.strip():
            criteria, sources = found.setdefault(html.escape(text.strip(), quote=False), (set(), set()))
            criteria.add(criterion)
            sources.add(source)
    if not found:
        return rendered
    needles = sorted(found, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(n) for n in needles))

    def mark(match) -> str:
        criteria, sources = found[match.group(0)]
        kind = next(iter(sources)) if len(sources) == 1 else "quote-many"
        return (f'<mark class="quote {kind}" data-criteria=" {" ".join(str(c) for c in sorted(criteria))} ">'
                f"{match.group(0)}</mark>")

    parts = re.split(r"(<[^>]+>)", rendered)
    for i, part in enumerate(parts):
        if part and not part.startswith("<"):
            parts[i] = pattern.sub(mark, part)
    return "".join(parts)


def adjudication_item(*, response: Response) -> dict:
    """Everything the adjudication page of ``response`` shows."""
    import pandas as pd  # lazy: pandas and the decision rules load with the page, not at start-up

    from ..metrics import gold_decide  # lazy: with the page, as pandas
    from ..selectors import ITEM  # lazy: with the page, as pandas

    project = response.project
    # The labels read once, for its cells and the decisions here; each rater's rationale and quotes
    # are read below, so the cohort cells need none of their own.
    table = side_by_side(response=response, cohort_notes=False)
    cohorts = table.cohort_decisions
    cohort_columns = [c for c in table.columns if c.kind == "cohort"]
    judge_columns = [c for c in table.columns if c.kind != "cohort"]
    adjudications = {a.criterion_id: a for a in Adjudication.objects.filter(response=response).select_related("adjudicator")}
    # Gold with the adjudications already read (``gold_frame`` would read them again, with its
    # extra columns), decided once: its provenance, and what the cohorts alone settle (disputed).
    adjudicated = pd.DataFrame(
        [(response.pk, a.criterion_id, a.verdict, a.option_label, a.value) for a in adjudications.values()],
        columns=[*ITEM, "verdict", "option", "value"]).astype({"value": float})
    gold = gold_decide(cohorts, adjudicated, keys=ITEM, with_cohort_decisions=False, with_settled=True)
    criterion_ids = gold["criterion_id"].astype(int).tolist()
    disputed = {c for c, settled in zip(criterion_ids, gold["settled"]) if settled == UNRESOLVED}
    provenance = dict(zip(criterion_ids, gold["provenance"]))

    raters: dict[tuple[int, str], list[RaterVerdict]] = {}
    numbers: dict[tuple[str, int], int] = {}
    quotes: list[tuple[str, int, str]] = []  # (text, criterion pk, source class)
    cohort_class = {c.title: f"quote-cohort-{i % 4}" for i, c in enumerate(c for c in table.columns if c.kind == "cohort")}
    labels = (labels_final(Label.objects.filter(response=response)).order_by("cohort__position", "role", "annotator__username")
              .values_list("criterion_id", "cohort__name", "annotator_id", "annotator__username", "role", "verdict",
                           "option_label", "value", "rationale", "evidence"))
    for c_pk, cohort, user_id, username, role, verdict, option, value, rationale, evidence in labels:
        if project.hide_rater_names:
            number = numbers.setdefault((cohort, user_id), sum(1 for k in numbers if k[0] == cohort) + 1)
            name = "checker" if role == Label.CHECKER_ROLE else f"annotator {number}"
        else:
            name = username
        found = [(q, bool(evidence_valid_quotes(quotes=[q], response_text=response.text))) for q in evidence or []]
        quotes += [(q, c_pk, cohort_class.get(cohort, "quote-cohort-0")) for q, ok in found if ok]
        raters.setdefault((c_pk, cohort), []).append(
            RaterVerdict(name=name, role=role, decision=decision_text(verdict=verdict, option=option, value=value),
                         rationale=rationale, quotes=found))
    # The judges' quotes, checked against the text once already by ``side_by_side``.
    quotes += [(q, c_pk, "quote-judge") for (c_pk, key), cell in table.cells.items() if key.startswith("judge:")
               for q, ok in cell.evidence if ok]

    rows = []
    for criterion in table.criteria:
        rows.append(AdjudicationRow(
            save_url=reverse("adjudication-save", args=[project.slug, response.pk, criterion.pk]),
            criterion=criterion, disputed=criterion.pk in disputed, provenance=provenance.get(criterion.pk, "unlabelled"),
            cohorts=[CohortVerdicts(name=col.title, cell=table.cells.get((criterion.pk, col.key), Cell()),
                                    raters=raters.get((criterion.pk, col.title), [])) for col in cohort_columns],
            judges=[(col, table.cells.get((criterion.pk, col.key), Cell())) for col in judge_columns],
            adjudication=adjudications.get(criterion.pk),
        ))
    response_html = mark_safe(_highlight(str(markdown_render(response.text)), quotes))
    return {
        "project": project, "response": response, "case": response.case, "rows": rows, "response_html": response_html,
        "judge_columns": judge_columns, "n_disputed": sum(1 for r in rows if r.disputed),
        "n_open": sum(1 for r in rows if r.disputed and r.adjudication is None),
        "categories": Adjudication.CATEGORIES, "category_keys": CATEGORY_KEYS,
        "confidences": [(value, caption, caption[:1].upper()) for value, caption in Adjudication.CONFIDENCES],  # with its key
    }
