"""What a judge run has to do: the (response, criterion, sample) calls of a project or a slice,
each call's prompt, and the few-shot examples it shows. Reads only.

A run's scope is ``{"cases": [case ids], "models": [model names], "criteria": [criterion ids],
"responses": [response ids]}`` (external ids; each key optional; empty = whole project). A
response is judged on its case's own criteria, or on the project rubric when its case has none.
"""
import random
from collections import Counter, defaultdict
from dataclasses import dataclass

from annotation.models import Case, Cohort, Criterion, Label, Response

from . import prompts
from .settings import JudgeSettings

SCOPE_KEYS = ("cases", "models", "criteria", "responses")


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


@dataclass(frozen=True)
class Call:
    item: Item
    sample: int

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.item.response_pk, self.item.criterion_pk, self.sample)


def plan_items(*, project, scope: dict | None) -> list[Item]:
    """The pairs in scope, in project order (response position, then criterion position)."""
    scope = scope or {}
    responses = Response.objects.filter(project=project)
    if scope.get("cases"):
        responses = responses.filter(case__external_id__in=scope["cases"])
    if scope.get("models"):
        responses = responses.filter(model__in=scope["models"])
    if scope.get("responses"):
        responses = responses.filter(external_id__in=scope["responses"])
    criteria = Criterion.objects.filter(project=project)
    if scope.get("criteria"):
        criteria = criteria.filter(external_id__in=scope["criteria"])
    by_case: dict[int | None, list[tuple]] = defaultdict(list)
    cases_with_own = set(
        Criterion.objects.filter(project=project, case__isnull=False).values_list("case_id", flat=True).distinct()
    )
    for row in criteria.order_by("case_id", "position").values_list(
        "pk", "case_id", "text", "kind", "options", "min_evidence", "rubric_version_id"
    ):
        by_case[row[1]].append(row)
    items = []
    for pk, text, model, case_pk in responses.order_by("position", "pk").values_list("pk", "text", "model", "case_id"):
        own = by_case.get(case_pk, []) if case_pk in cases_with_own else by_case.get(None, [])
        for c_pk, _, c_text, kind, options, min_evidence, version in own:
            items.append(Item(pk, text, model, case_pk, c_pk, c_text, kind, options or [], min_evidence, version))
    return items


def plan_calls(*, items: list[Item], samples: int) -> list[Call]:
    return [Call(item, s) for item in items for s in range(max(1, samples))]


def model_order(*, project) -> list[str]:
    """Source models by first appearance in the project (the basis of stable aliases)."""
    first: dict[str, int] = {}
    for model, position in Response.objects.filter(project=project).order_by("position", "pk").values_list("model", "position"):
        first.setdefault(model, position)
    return list(first)


class PromptBuilder:
    """Builds each call's messages for one judge: template, condition, examples, shuffling."""

    def __init__(self, *, judge, settings: JudgeSettings, template: prompts.TemplateText):
        self.judge = judge
        self.settings = settings
        self.template = template
        self.aliases = prompts.model_aliases(model_order(project=judge.project))
        self.conversations = {
            pk: prompts.conversation_text(prompt=prompt, messages=messages)
            for pk, prompt, messages in Case.objects.filter(project=judge.project).values_list("pk", "prompt", "messages")
        }
        self.pool, self.pool_texts = fewshot_pool(project=judge.project, cohort_name=settings.few_shot_cohort) if (
            settings.few_shot_k > 0 and settings.few_shot_cohort
        ) else ({}, {})

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

    def messages(self, call: Call) -> list[dict]:
        item = call.item
        options = None
        if item.kind != "binary":
            options = prompts.options_order(
                options=item.options, shuffle=self.settings.shuffle_options,
                seed=f"{self.settings.shuffle_seed}:{item.response_pk}:{item.criterion_pk}:{call.sample}",
            )
        return prompts.messages_render(
            template=self.template, kind=item.kind, conversation=self.conversations.get(item.case_pk, ""),
            author=self.author(item), response_text=item.response_text, criterion_text=item.criterion_text,
            options=options, examples=self.examples(item),
            min_evidence=max(item.min_evidence, self.settings.min_evidence),
        )


def fewshot_pool(*, project, cohort_name: str) -> tuple[dict[int, list[tuple[int, str | None, str | None]]], dict[int, str]]:
    """A cohort's decisions per criterion — (response, verdict, option) — and the responses' texts.

    The cohort decision rule of SPEC §2: a checker's label wins, else the majority of the
    annotators' labels; ties are left out (they teach nothing)."""
    cohort = Cohort.objects.filter(project=project, name=cohort_name).first()
    if cohort is None:
        return {}, {}
    votes: dict[tuple[int, int], list[tuple[str, tuple]]] = defaultdict(list)
    for r, c, role, verdict, option in Label.objects.filter(cohort=cohort).values_list(
        "response_id", "criterion_id", "role", "verdict", "option_label"
    ):
        if verdict is None and option is None:
            continue
        votes[(r, c)].append((role, (verdict, option)))
    pool: dict[int, list] = defaultdict(list)
    for (r, c), rows in sorted(votes.items()):
        checked = [d for role, d in rows if role == "checker"]
        counts = Counter(checked or [d for _, d in rows]).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            continue
        verdict, option = counts[0][0]
        pool[c].append((r, verdict, option))
    response_ids = {r for entries in pool.values() for r, _, _ in entries}
    texts = dict(Response.objects.filter(pk__in=response_ids).values_list("pk", "text"))
    return dict(pool), texts


def fewshot_examples(*, pool: list[tuple[int, str | None, str | None]], texts: dict[int, str], exclude_response: int,
                     k: int, seed: str) -> list[prompts.Example]:
    """k examples, balanced over the decisions present (round robin), seeded, never the judged response."""
    rng = random.Random(seed)
    groups: dict[tuple, list] = defaultdict(list)
    for r, verdict, option in pool:
        if r != exclude_response:
            groups[(verdict or "", option or "")].append((r, verdict, option))
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
    return [prompts.Example(response_text=texts.get(r, ""), verdict=v, option_label=o) for r, v, o in chosen]
