"""The adjudication step of a bundle import (SPEC §4 ``adjudications.jsonl``): one final decision
per (response, criterion) with its adjudicator, confidence, category and note, validated like
every other decision. New adjudications are written in bulk with their first history row; a
changed one goes through ``adjudication_record`` (its history row says "import"). Mixed into the
importer, after the labels and judgments."""
from django.contrib.auth import get_user_model

from annotation.decisions import DecisionError, decision_validate

from ..adjudication.services import CATEGORIES, CONFIDENCES, adjudication_record, adjudication_state
from ..models import Adjudication, AdjudicationHistory
from . import validate as v

FIELDS = ("response_id", "criterion_id", "verdict", "option", "value", "adjudicator", "confidence", "category", "note")


class AdjudicationStep:
    def _adjudications(self) -> int:
        responses, criteria = self.lookups
        User = get_user_model()
        users = dict(User.objects.values_list(User.USERNAME_FIELD, "pk"))
        existing = {(a.response_id, a.criterion_id): a for a in
                    Adjudication.objects.filter(project=self.project).select_related("adjudicator")}
        seen: set[tuple] = set()
        new, changed = [], []
        for number, obj in self.reader.iter_jsonl("adjudications.jsonl"):
            try:
                v.check_keys(obj, required=("response_id", "criterion_id"), optional=FIELDS)
                response_pk, criterion = self._target(obj, responses, criteria)
                key = (response_pk, criterion[0])
                if key in seen:
                    raise v.FieldError("criterion_id", f"a second adjudication of ({obj['response_id']}, {obj['criterion_id']})")
                seen.add(key)
                present = {k: obj[k] for k in ("verdict", "option", "value") if k in obj and obj[k] is not None}
                if not present:
                    raise v.FieldError("verdict", "an adjudication needs its decision (verdict, option or value)")
                decision = decision_validate(kind=criterion[2], options=criterion[3], verdict=present.get("verdict"),
                                             option_label=present.get("option"), value=present.get("value"))
                confidence = obj.get("confidence") or ""
                category = obj.get("category") or ""
                if confidence and confidence not in CONFIDENCES:
                    raise v.FieldError("confidence", f"confidence {confidence!r} is not one of {', '.join(CONFIDENCES)}")
                if category and category not in CATEGORIES:
                    raise v.FieldError("category", f"category {category!r} is not one of {', '.join(CATEGORIES)}")
                note = v.string(obj, "note", required=False, blank=True)
                adjudicator = v.string(obj, "adjudicator", required=False, max_length=150)  # auth's user name length
            except (v.FieldError, DecisionError) as exc:
                self._fail(exc, "adjudications.jsonl", number)
            user_pk = users.get(adjudicator) if adjudicator else None
            if adjudicator and user_pk is None:
                user_pk = users[adjudicator] = User.objects.create_user(username=adjudicator).pk
            row = (key, decision, confidence, category, note, user_pk)
            current = existing.get(key)
            if current is None:
                new.append(row)
            elif (current.verdict, current.option_label, current.value, current.confidence, current.category, current.note,
                  current.adjudicator_id) != (decision.verdict, decision.option_label, decision.value, confidence, category,
                                              note, user_pk):
                changed.append((current, row))
        created = Adjudication.objects.bulk_create([
            Adjudication(project=self.project, response_id=r, criterion_id=c, verdict=d.verdict, option_label=d.option_label,
                         value=d.value, confidence=conf, category=cat, note=note, adjudicator_id=user, revision=1)
            for (r, c), d, conf, cat, note, user in new
        ], batch_size=2000)
        # Both databases return the new primary keys from a bulk insert (SQLite 3.35+, PostgreSQL).
        names = {pk: name for name, pk in users.items()}
        AdjudicationHistory.objects.bulk_create([
            AdjudicationHistory(adjudication=a, project_id=self.project.pk, changed_by_id=a.adjudicator_id, action="import",
                                old=None, new={**adjudication_state(a), "adjudicator": names.get(a.adjudicator_id)})
            for a in created
        ], batch_size=2000)
        for current, ((_, criterion_pk), decision, confidence, category, note, user_pk) in changed:
            adjudication_record(
                response=current.response, criterion=current.criterion,
                user=User.objects.get(pk=user_pk) if user_pk else None, verdict=decision.verdict,
                option_label=decision.option_label, value=decision.value if decision.option_label is None else None,
                confidence=confidence, category=category, note=note, action="import",
            )
        return len(new) + len(changed)
