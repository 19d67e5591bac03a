"""The labeling config's side of the Label Studio format: a Choices or Rating control as a
criterion (``Control``), the controls of a config (``config_controls``), the config written for a
rubric (``config_xml``), and the words a Choice may carry for a verdict (``verdict_of``)."""
import re
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from annotation.vocabulary import CANNOT_ASSESS, MET, NOT_MET, VERDICT_WORDS, VERDICTS, verdict_caption
from grading.bundles.errors import BundleError

COHORT = "labelstudio"  # the one cohort the annotators of an export join
USER_PREFIX = "labelstudio-"
USERNAME_KEY = "evalsite_username"  # a key of an exported annotation that Label Studio ignores
MODEL_VERSION = "model_version"  # a prediction's model: the judge whose judgments it holds
SAMPLE_KEY = "evalsite_sample"  # a key of an exported prediction that Label Studio ignores: the judge's sample
UNNAMED_JUDGE = "labelstudio-predictions"  # the judge of predictions without a model version
TO_NAME = "response"
HINT = re.compile(r"^value (\S+?)( n/a)?$")
# Words a Choice may carry for a verdict (compared lower-cased): evalsite's own names and words,
# and the usual yes/no pairs.
VERDICT_OF = {**{name: name for name in VERDICTS}, **{word: name for name, word in VERDICT_WORDS.items()},
              "yes": MET, "true": MET, "pass": MET, "no": NOT_MET, "false": NOT_MET, "fail": NOT_MET,
              "n/a": CANNOT_ASSESS, "unsure": CANNOT_ASSESS, "unknown": CANNOT_ASSESS}


def verdict_of(word: str) -> str | None:
    return VERDICT_OF.get(word.strip().lower())


@dataclass
class Control:
    name: str
    text: str
    kind: str  # "choices" | "rating"
    choices: list = field(default_factory=list)  # [(word, value or None, na)]
    max_rating: int = 0

    def spec(self) -> dict:
        """The control as a bundle criterion."""
        if self.kind == "rating":
            options = [{"label": str(n), "value": n} for n in range(1, max(self.max_rating, 2) + 1)]
            return {"criterion_id": self.name, "text": self.text, "kind": "ordinal", "options": options}
        scored = [c for c in self.choices if verdict_of(c[0]) != CANNOT_ASSESS]
        if all(verdict_of(word) for word, _, _ in self.choices):
            return {"criterion_id": self.name, "text": self.text, "kind": "binary"}
        options = [{"label": word, "value": i if value is None else value, **({"na": True} if na else {})}
                   for i, (word, value, na) in enumerate(scored)]
        return {"criterion_id": self.name, "text": self.text, "kind": "ordinal", "options": options}

    def decision(self, word: str) -> dict | None:
        """A chosen word as a label's decision fields; None when the control does not offer it."""
        if self.kind == "rating":
            return {"option": word} if 1 <= int(word) <= max(self.max_rating, 2) else None
        binary = self.spec()["kind"] == "binary"
        verdict = verdict_of(word)
        if verdict == CANNOT_ASSESS or (binary and verdict):
            return {"verdict": verdict}
        if not binary and any(word == known for known, _, _ in self.choices):
            return {"option": word}
        return None


def config_controls(path: Path) -> dict[str, Control]:
    """The Choices and Rating controls of a labeling config, in order; a Header just before a
    control is its criterion's text."""
    try:
        root = ElementTree.fromstring(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ElementTree.ParseError) as exc:
        raise BundleError(path.name, f"not a labeling config: {exc}") from exc
    controls, header = {}, None
    for element in root.iter():
        if element.tag == "Header":
            header = element.get("value") or (element.text or "").strip() or None
        elif element.tag in ("Choices", "Rating") and element.get("name"):
            name = element.get("name")
            control = Control(name=name, text=header or name, kind=element.tag.lower())
            if element.tag == "Rating":
                control.max_rating = int(element.get("maxRating") or 5)
            for choice in element.iter("Choice"):
                hint = HINT.match(choice.get("hint") or "")
                value = float(hint.group(1)) if hint else None
                control.choices.append((choice.get("alias") or choice.get("value") or "", value, bool(hint and hint.group(2))))
            controls[name] = control
            header = None
    return controls


def config_xml(criteria: list[dict]) -> str:
    view = ElementTree.Element("View")
    for name in ("prompt", TO_NAME):
        ElementTree.SubElement(view, "Header", value=name.capitalize())
        ElementTree.SubElement(view, "Text", name=name, value=f"${name}")
    for criterion in criteria:
        ElementTree.SubElement(view, "Header", value=criterion["text"])
        choices = ElementTree.SubElement(view, "Choices", name=criterion["criterion_id"], toName=TO_NAME,
                                         choice="single", showInline="true")
        if criterion["kind"] == "binary":
            words = [verdict_caption(verdict) for verdict in VERDICTS]
            for word in words:
                ElementTree.SubElement(choices, "Choice", value=word)
            continue
        for option in criterion["options"]:
            hint = f"value {option['value']!r}" + (" n/a" if option.get("na") else "")
            ElementTree.SubElement(choices, "Choice", value=option["label"], hint=hint)
        ElementTree.SubElement(choices, "Choice", value=verdict_caption(CANNOT_ASSESS))
    ElementTree.indent(view)
    return ElementTree.tostring(view, encoding="unicode") + "\n"
