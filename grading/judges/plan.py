"""What a judge run has to do: the (response, criterion, sample) calls of a project or a slice,
each call's prompt, and the few-shot examples it shows. Reads only. The call types (``Item``,
``Call``) live in the leaf module ``calls``.

A run's scope is ``{"cases": [case ids], "models": [model names], "criteria": [criterion ids],
"responses": [response ids]}`` (external ids; each key optional; empty = whole project). A
response is judged on the criteria of its case's rubric version. Few-shot examples carry the
cohort decisions of ``grading.selectors.cohort_frame`` (the one cohort rule; ties teach nothing
and are left out), from the cases of the judge's few-shot split only. A criterion of a
case-specific rubric exists in one case, so outside the split it has no labelled answers of its
own: its examples are the decisions on the criteria of other cases that share one of its tags
and its kind and options (``fewshot_related``), each example shown with its own rubric item. A
run whose case-specific criteria would get no example that way is refused before any call is made
(``fewshot_refusal``), rather than paying for calls without the examples the judge was set up with.
"""
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.db.models import Count, Q

from annotation.models import Case, Cohort, Criterion, Response

from . import prompts
from .calls import Call, Item, criterion_text
from .compiled import CompiledPrompts
from .settings import JudgeSettings

SCOPE_KEYS = ("cases", "models", "criteria", "responses")


PLAN_CHUNK = 500  # responses read (and planned) at a time


def _scoped(*, project, scope: dict | None, compiled: bool = False):
    """The responses and criteria a scope selects (checklist items only, ``compiled``)."""
    scope = scope or {}
    responses = Response.objects.filter(project=project)
    if scope.get("cases"):
        responses = responses.filter(case__external_id__in=scope["cases"])
    if scope.get("models"):
        responses = responses.filter(model__in=scope["models"])
    if scope.get("responses"):
        responses = responses.filter(external_id__in=scope["responses"])
    criteria = Criterion.objects.filter(project=project)
    if compiled:
        criteria = criteria.exclude(checklist_of="")
    if scope.get("criteria"):
        criteria = criteria.filter(external_id__in=scope["criteria"])
    return responses, criteria


def plan_items(*, project, scope: dict | None, chunk: int = PLAN_CHUNK, compiled: bool = False) -> Iterator[list[Item]]:
    """The pairs in scope, in project order (response position, then criterion position), a
    chunk of ``chunk`` responses at a time: a run holds one chunk of its plan, not the plan
    (issue 11: flat memory whatever the number of calls). Responses are read by keyset
    pagination on (position, pk), so no cursor stays open while the run writes. ``compiled``:
    the checklist items of traits only (RULERS compiled mode, ``compiled``)."""
    responses, criteria = _scoped(project=project, scope=scope, compiled=compiled)
    by_version: dict[int, list[tuple]] = defaultdict(list)
    for row in criteria.order_by("rubric_version_id", "position").values_list(
        "pk", "rubric_version_id", "text", "kind", "options", "min_evidence", "checklist_of", "variants"
    ):
        by_version[row[1]].append(row)
    after = None
    while True:
        page = responses.order_by("position", "pk")
        if after is not None:
            page = page.filter(Q(position__gt=after[0]) | Q(position=after[0], pk__gt=after[1]))
        rows = list(page.values_list("pk", "text", "model", "case_id", "case__rubric_version_id", "position")[:chunk])
        if not rows:
            return
        items = []
        for pk, text, model, case_pk, version, _ in rows:
            for c_pk, _, c_text, kind, options, min_evidence, checklist_of, variants in by_version.get(version, []):
                items.append(Item(pk, text, model, case_pk, c_pk, c_text, kind, options or [], min_evidence, version,
                                  checklist_of, variants or None))
        yield items
        after = (rows[-1][5], rows[-1][0])


def plan_count(*, project, scope: dict | None, samples: int, compiled: bool = False) -> int:
    """How many judgments ``plan_items`` × samples asks for, counted by the database (one per
    call, or per checklist item in compiled mode, where a call answers a trait's items)."""
    responses, criteria = _scoped(project=project, scope=scope, compiled=compiled)
    per_version = dict(criteria.values("rubric_version_id").annotate(n=Count("pk")).values_list("rubric_version_id", "n"))
    counts = responses.values("case__rubric_version_id").annotate(n=Count("pk")).values_list("case__rubric_version_id", "n")
    return sum(per_version.get(version, 0) * n for version, n in counts) * max(1, samples)


def plan_calls(*, items: Iterable[Item], samples: int) -> Iterator[Call]:
    for item in items:
        for s in range(max(1, samples)):
            yield Call(item, s)


def model_order(*, project) -> list[str]:
    """Source models by first appearance in the project (the basis of stable aliases)."""
    first: dict[str, int] = {}
    for model, position in Response.objects.filter(project=project).order_by("position", "pk").values_list("model", "position"):
        first.setdefault(model, position)
    return list(first)


def template_for(judge) -> prompts.TemplateText:
    """The judge's prompt template (the built-in one when it names none)."""
    t = judge.prompt_template
    if t is None:
        return prompts.DEFAULT_TEMPLATE
    return prompts.TemplateText(t.name, t.version, t.system, t.binary_user, t.option_user)


class PromptBuilder:
    """Builds each call's messages for one judge: template, condition, examples, shuffling."""

    def __init__(self, *, judge, settings: JudgeSettings, template: prompts.TemplateText):
        self.judge = judge
        self.settings = settings
        self.template = template
        self.aliases = prompts.model_aliases(model_order(project=judge.project))
        self.conversations, self.references = {}, {}
        for pk, prompt, messages, reference in Case.objects.filter(project=judge.project).values_list(
                "pk", "prompt", "messages", "reference_answer"):
            self.conversations[pk] = prompts.conversation_text(prompt=prompt, messages=messages)
            if reference and "$reference_answer" in template.binary_user + template.option_user:
                self.references[pk] = reference
        self.compiled = None
        self.related: dict[int, list[int]] = {}
        self.criterion_texts: dict[int, str] = {}
        if settings.few_shot_k > 0 and settings.few_shot_cohort:
            from .fewshot import fewshot_split_cases  # lazy: the few-shot split brings pandas: loaded when a run is planned

            self.pool, self.pool_texts = fewshot_pool(project=judge.project, cohort_name=settings.few_shot_cohort,
                                                      cases=fewshot_split_cases(judge))
            self.related = fewshot_related(project=judge.project)
            self.criterion_texts = dict(Criterion.objects.filter(pk__in={c for cs in self.related.values() for c in cs})
                                        .values_list("pk", "text"))
        else:
            self.pool, self.pool_texts = {}, {}

    def author(self, item: Item) -> str:
        if self.judge.condition == "attributed":
            return item.model
        return self.aliases.get(item.model, "Expert")

    def examples(self, item: Item) -> list[prompts.Example]:
        """The criterion's own labelled answers from the split; for a criterion of a case-specific
        rubric without any (its case is not in the split), those of its related criteria."""
        if not self.pool:
            return []
        pool = [entry for entry in self.pool.get(item.criterion_pk, []) if entry[0] != item.response_pk]
        if not pool and item.criterion_pk in self.related:
            pool = [(*entry, c) for c in self.related[item.criterion_pk] for entry in self.pool.get(c, [])]
        return fewshot_examples(
            pool=pool, texts=self.pool_texts, exclude_response=item.response_pk, criteria=self.criterion_texts,
            k=self.settings.few_shot_k, seed=f"{self.settings.few_shot_seed}:{item.criterion_pk}:{item.response_pk}",
        )

    def messages(self, call) -> list[dict]:
        if hasattr(call, "items"):  # a compiled call: one trait's checklist (``compiled``)
            if self.compiled is None:
                self.compiled = CompiledPrompts(self.judge.project)
            return self.compiled.messages(call, conversation=self.conversations.get(call.item.case_pk, ""),
                                          author=self.author(call.item), settings=self.settings)
        item = call.item
        options = None
        if item.kind != "binary":
            options = prompts.options_order(
                options=item.options, shuffle=self.settings.shuffle_options,
                seed=f"{self.settings.shuffle_seed}:{item.response_pk}:{item.criterion_pk}:{call.sample}",
            )
            if self.settings.variant == "reversed":
                options = list(reversed(options))
        return prompts.messages_render(
            template=self.template, kind=item.kind, conversation=self.conversations.get(item.case_pk, ""),
            author=self.author(item), response_text=item.response_text, criterion_text=criterion_text(item, self.settings),
            options=options, examples=self.examples(item),
            min_evidence=max(item.min_evidence, self.settings.min_evidence),
            reference_answer=self.references.get(item.case_pk, ""),
        )


def fewshot_pool(*, project, cohort_name: str, cases=None) -> tuple[dict[int, list[tuple]], dict[int, str]]:
    """A cohort's decisions per criterion — (response, verdict, option, value) — and the responses'
    texts, from the responses of ``cases`` only (the judge's few-shot split, ``fewshot``; None:
    every case). The decisions are the cohort's (SPEC §2 rule, ``cohort_frame``); ties are left out."""
    from ..selectors import cohort_frame  # lazy: pandas loads only when a run plans few-shot examples

    cohort = Cohort.objects.filter(project=project, name=cohort_name).first()
    if cohort is None:
        return {}, {}
    decided = cohort_frame(cohort=cohort)
    decided = decided[~decided["unresolved"].astype(bool)].sort_values(["response_id", "criterion_id"])
    if cases is not None:
        in_split = set(Response.objects.filter(project=project, case_id__in=list(cases)).values_list("pk", flat=True))
        decided = decided[decided["response_id"].isin(in_split)]
    pool: dict[int, list] = defaultdict(list)
    for r, c, verdict, option, value in zip(decided["response_id"], decided["criterion_id"], decided["verdict"],
                                            decided["option"], decided["value"]):
        bare_value = None if verdict is not None or option is not None or value != value else float(value)
        pool[int(c)].append((int(r), verdict, option, bare_value))
    response_ids = {r for entries in pool.values() for r, *_ in entries}
    texts = dict(Response.objects.filter(pk__in=response_ids).values_list("pk", "text"))
    return dict(pool), texts


def fewshot_related(*, project) -> dict[int, list[int]]:
    """For each criterion of a case-specific rubric, the criteria of other cases it may borrow
    few-shot examples from: those sharing one of its tags, of its kind and, for options, with the
    same options (labels and values), so an example's grade reads the same. Criteria without a
    related one are left out."""
    rows = list(Criterion.objects.filter(project=project, case__isnull=False).values_list("pk", "case_id", "tags", "kind",
                                                                                          "options"))
    by_tag: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for pk, case_pk, tags, kind, options in rows:
        shape = (kind, tuple((str(o.get("label")), float(o.get("value", 0)), bool(o.get("na"))) for o in options or []))
        for tag in set(tags or []):
            by_tag[(tag, shape)].append((pk, case_pk))
    related: dict[int, set[int]] = defaultdict(set)
    for members in by_tag.values():
        for pk, case_pk in members:
            related[pk].update(other for other, other_case in members if other_case != case_pk)
    return {pk: sorted(others) for pk, others in related.items() if others}


def fewshot_refusal(*, judge, settings: JudgeSettings, scope: dict | None) -> str:
    """Why a run of ``judge`` over ``scope`` would waste its few-shot calls, or "" when it would not:
    a criterion of a case-specific rubric in scope whose case is outside the few-shot split, with no
    criterion of a split case sharing one of its tags, kind and options, gets no example at all."""
    if not (settings.few_shot_k > 0 and settings.few_shot_cohort):
        return ""
    from .fewshot import fewshot_split_cases  # lazy: the few-shot split brings numpy

    split = fewshot_split_cases(judge)
    responses, criteria = _scoped(project=judge.project, scope=scope)
    cases = set(responses.values_list("case_id", flat=True).distinct())
    needing = list(criteria.filter(case_id__in=cases - split).values_list("pk", "external_id", "case__external_id"))
    if not needing:
        return ""
    related = fewshot_related(project=judge.project)
    in_split = set(Criterion.objects.filter(project=judge.project, case_id__in=split).values_list("pk", flat=True))
    lonely = [(ext, case) for pk, ext, case in needing if not set(related.get(pk, [])) & in_split]
    if not lonely:
        return ""
    named = ", ".join(f"{ext} (case {case})" for ext, case in lonely[:5]) + (" …" if len(lonely) > 5 else "")
    return (f"few-shot examples for {len(lonely)} criteri{'on' if len(lonely) == 1 else 'a'} of case-specific rubrics "
            f"would be empty: {named}. Their cases are outside the few-shot split, and no criterion of a split case "
            "shares a tag, the kind and the options with them, so every call on them would run without examples. "
            "Tag related criteria alike, put cases with such criteria in the split (few_shot.split), narrow the run's "
            "scope, or run without few-shot examples.")


def fewshot_examples(*, pool: list[tuple], texts: dict[int, str], exclude_response: int,
                     k: int, seed: str, criteria: dict[int, str] | None = None) -> list[prompts.Example]:
    """k examples, balanced over the decisions present (round robin), seeded, never the judged response.
    An entry is (response, verdict, option, value) or, borrowed from a related criterion, with that
    criterion's pk last: its example then shows its own rubric item (``criteria``: texts by pk)."""
    rng = random.Random(seed)
    groups: dict[tuple, list] = defaultdict(list)
    for entry in pool:
        r, verdict, option, value = entry[:4]
        if r != exclude_response:
            groups[(verdict or "", option or "", -1.0 if value is None else value)].append(tuple(entry))
    ordered = []
    for decision in sorted(groups):
        members = sorted(groups[decision])
        rng.shuffle(members)
        ordered.append(members)
    rng.shuffle(ordered)
    chosen = []
    while len(chosen) < k and any(ordered):
        for members in ordered:
            if members and len(chosen) < k:
                chosen.append(members.pop())
    rng.shuffle(chosen)  # do not teach a position pattern
    return [prompts.Example(response_text=texts.get(entry[0], ""), verdict=entry[1], option_label=entry[2], value=entry[3],
                            criterion_text=(criteria or {}).get(entry[4], "") if len(entry) > 4 else "")
            for entry in chosen]
