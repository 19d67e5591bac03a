"""Judge prompts (SPEC §7): the built-in rubric-item templates, rendering one call's chat
messages, stable anonymous aliases for source models, option shuffling and few-shot blocks.

Templates use ``string.Template`` placeholders so that literal JSON braces in a template need
no escaping: ``$conversation`` (the case), ``$author`` (who wrote the response: the model in
the attributed condition, a stable alias such as "Expert 3" in the anonymized one),
``$response``, ``$criterion``, ``$options`` (ordinal / nominal only), ``$examples`` (few-shot
block, may be empty), ``$evidence_rule`` (may be empty) and ``$reference_answer`` (the case's
reference answer, empty when it has none; the built-in templates do not use it). Pure Python:
no Django.
"""
import random
from dataclasses import dataclass
from string import Template

from annotation.vocabulary import CANNOT_ASSESS, MET

DEFAULT_TEMPLATE_NAME = "clinconsensus-rubric-item"
DEFAULT_TEMPLATE_VERSION = 1

DEFAULT_SYSTEM = (
    "You are a careful physician grading another clinician's written answer against a single "
    "rubric item. You judge only that item, you rely only on what the answer actually says, and "
    "you reply with one JSON object and nothing else."
)

# What both default templates show first: the conversation, the answer and the rubric item.
_ITEM_CONTEXT = """\
<conversation>
$conversation
</conversation>

<answer author="$author">
$response
</answer>

<rubric_item>
$criterion
</rubric_item>
"""

DEFAULT_BINARY_USER = _ITEM_CONTEXT + """\
$examples
Decide whether the answer satisfies the rubric item.
- If the item has several parts, the answer must satisfy every part to meet it.
- If the item lists things with "such as", "for example" or "including", the list is \
illustrative: the answer does not have to mention every listed thing.
- Judge the answer as written; do not give credit for what it might have meant.
$evidence_rule
Reply with a JSON object of exactly this form:
{"explanation": "<one or two sentences>", "criteria_met": true or false, "evidence": ["<verbatim quote from the answer>", ...]}
"""

DEFAULT_OPTION_USER = _ITEM_CONTEXT + """\

<options>
$options
</options>
$examples
Choose the one option that best describes the answer with respect to the rubric item.
Judge the answer as written; do not give credit for what it might have meant.
$evidence_rule
Reply with a JSON object of exactly this form, where "option" is the option's text exactly as listed:
{"explanation": "<one or two sentences>", "option": "<option text>", "evidence": ["<verbatim quote from the answer>", ...]}
"""


@dataclass(frozen=True)
class TemplateText:
    name: str
    version: int
    system: str
    binary_user: str
    option_user: str

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"


DEFAULT_TEMPLATE = TemplateText(
    DEFAULT_TEMPLATE_NAME, DEFAULT_TEMPLATE_VERSION, DEFAULT_SYSTEM, DEFAULT_BINARY_USER, DEFAULT_OPTION_USER
)


@dataclass(frozen=True)
class Example:
    """One few-shot example: another response's text and a cohort's decision on the criterion, or
    on a related criterion of another case (``criterion_text``: that rubric item, shown with it)."""

    response_text: str
    verdict: str | None = None
    option_label: str | None = None
    value: float | None = None  # an ordinal decision given as a value between the options
    criterion_text: str = ""


def model_aliases(models_in_order: list[str]) -> dict[str, str]:
    """Stable aliases: the n-th source model (by first appearance in the project) is "Expert n".

    Appearance order only grows when responses are added, so an alias never changes."""
    return {model: f"Expert {i + 1}" for i, model in enumerate(models_in_order)}


def conversation_text(*, prompt: str, messages: list[dict] | None) -> str:
    if messages:
        return "\n\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in messages)
    return prompt


def options_order(*, options: list[dict], shuffle: bool, seed: str) -> list[dict]:
    """The options as shown to the judge; shuffled per (seed, item) when asked.

    The judge answers with the option's text, so the score follows the option's value
    whatever its position."""
    shown = list(options)
    if shuffle:
        random.Random(seed).shuffle(shown)
    return shown


def examples_block(*, examples: list[Example], kind: str, max_chars: int = 1500) -> str:
    if not examples:
        return ""
    related = any(ex.criterion_text for ex in examples)
    parts = ["", "<examples>", "Graded examples of other answers to related rubric items of other cases, each with its "
             "own item:" if related else "Graded examples of other answers to the same rubric item:"]
    for i, ex in enumerate(examples, 1):
        text = ex.response_text if len(ex.response_text) <= max_chars else ex.response_text[:max_chars] + " [...]"
        if kind == "binary":
            if ex.verdict == CANNOT_ASSESS:
                decision = '"criteria_met": null (cannot be assessed)'
            else:
                decision = f'"criteria_met": {"true" if ex.verdict == MET else "false"}'
        elif ex.option_label is not None:
            decision = f'"option": "{ex.option_label}"'
        elif ex.value is not None:
            decision = f'"value": {ex.value:g} (between the options, on their scale)'
        else:
            decision = '"option": null (cannot be assessed)'
        item = f"Rubric item: {ex.criterion_text}\n" if ex.criterion_text else ""
        parts.append(f"Example {i}:\n{item}<answer>\n{text}\n</answer>\nGrade: {{{decision}}}")
    parts.append("</examples>")
    return "\n".join(parts) + "\n"


def evidence_rule_text(min_quotes: int) -> str:
    if min_quotes <= 0:
        return ""
    plural = "quote" if min_quotes == 1 else "quotes"
    return (
        f"- Support your decision with at least {min_quotes} verbatim {plural} from the answer in \"evidence\"; "
        "quotes that do not appear in the answer word for word do not count.\n"
    )


def messages_render(
    *,
    template: TemplateText,
    kind: str,
    conversation: str,
    author: str,
    response_text: str,
    criterion_text: str,
    options: list[dict] | None = None,
    examples: list[Example] | None = None,
    min_evidence: int = 0,
    reference_answer: str = "",
) -> list[dict]:
    """The chat messages of one call."""
    values = {
        "reference_answer": reference_answer,
        "conversation": conversation,
        "author": author,
        "response": response_text,
        "criterion": criterion_text,
        "options": "\n".join(f"- {o['label']}" for o in options or []),
        "examples": examples_block(examples=examples or [], kind=kind),
        "evidence_rule": evidence_rule_text(min_evidence),
    }
    user = Template(template.binary_user if kind == "binary" else template.option_user).safe_substitute(values)
    messages = [{"role": "user", "content": user}]
    if template.system:
        messages.insert(0, {"role": "system", "content": template.system})
    return messages
