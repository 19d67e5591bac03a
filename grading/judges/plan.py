"""What a judge run has to do: the (response, criterion, sample) calls of a project or a slice,
each call's prompt, and the few-shot examples it shows. Reads only. The call types (``Item``,
``Call``) live in the leaf module ``calls``.

A run's scope is ``{"cases": [case ids], "models": [model names], "criteria": [criterion ids],
"responses": [response ids]}`` (external ids; each key optional; empty = whole project). A
response is judged on the criteria of its case's rubric version. Few-shot examples carry the
cohort decisions of ``grading.selectors.cohort_frame`` (the one cohort rule; ties teach nothing
and are left out).
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
        if settings.few_shot_k > 0 and settings.few_shot_cohort:
            from .fewshot import fewshot_split_cases  # lazy: the few-shot split brings pandas: loaded when a run is planned

            self.pool, self.pool_texts = fewshot_pool(project=judge.project, cohort_name=settings.few_shot_cohort,
                                                      cases=fewshot_split_cases(judge))
        else:
            self.pool, self.pool_texts = {}, {}

    def author(self, item: Item) -> str:
        if self.judge.condition == "attributed":
            return item.model
        return self.aliases.get(item.model, "Expert")

    def examples(self, item: Item) -> list[prompts.Example]:
        if not self.pool:
            return []
        return fewshot_examples(
            pool=self.pool.get(item.criterion_pk, []), texts=self.pool_texts, exclude_response=item.response_pk,
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


def fewshot_examples(*, pool: list[tuple], texts: dict[int, str], exclude_response: int,
                     k: int, seed: str) -> list[prompts.Example]:
    """k examples, balanced over the decisions present (round robin), seeded, never the judged response."""
    rng = random.Random(seed)
    groups: dict[tuple, list] = defaultdict(list)
    for r, verdict, option, value in pool:
        if r != exclude_response:
            groups[(verdict or "", option or "", -1.0 if value is None else value)].append((r, verdict, option, value))
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
    return [prompts.Example(response_text=texts.get(r, ""), verdict=v, option_label=o, value=x) for r, v, o, x in chosen]
