"""The label and judgment steps of a bundle import: validating ``labels.jsonl`` and
``judgments.jsonl`` line by line and writing them in bulk (SPEC §4).

Mixed into the importer. Each line is checked by a fast path built for the well-formed
case; anything unusual falls back to the field validators, which name the offending field.
Valid rows go straight into a COPY (``fastinsert.RowWriter``) that the server inserts while
Python validates the following lines; the first bad line aborts the import and the
transaction takes back whatever was copied before it.
"""
import json
from contextlib import contextmanager

import orjson
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection

from annotation.decisions import DecisionError, decision_validate
from annotation.labels import MAX_RATIONALE, LabelChange, label_input_check, labels_import_history, labels_write
from annotation.markdown import response_quote_checker
from annotation.models import Cohort, CohortMembership, Criterion, Label, LabelHistory, Project, Response, RubricVersion
from evalsite.fastinsert import InsertFailed, RowWriter, lock_key_share

from ..models import Judge, Judgment
from . import validate as v
from .errors import BundleError

ROLES = (CohortMembership.ANNOTATOR, CohortMembership.CHECKER)


class LabelJudgmentSteps:
    _quote_checkers: dict | None = None  # response pk -> its text, then its quote checker

    def _lookups(self):
        """Maps from external ids to what label and judgment lines need, in a few queries; the
        rows they point at are locked against deletion until the import commits."""
        lock_key_share(Project._meta.db_table, "id = %s", [self.project.pk])
        for model in (Response, Criterion, Cohort, RubricVersion):
            lock_key_share(model._meta.db_table, "project_id = %s", [self.project.pk])
        lock_key_share(Judge._meta.db_table, "project_id = %s", [self.project.pk])
        responses = {
            ext: (pk, version)
            for ext, pk, version in Response.objects.filter(project=self.project).values_list(
                "external_id", "pk", "case__rubric_version_id"
            )
        }
        criteria = {}
        shapes: dict[tuple, tuple] = {}  # criteria with the same kind and options validate alike
        for ext, pk, case_id, kind, options, version in self.project.criteria.values_list(
            "external_id", "pk", "case_id", "kind", "options", "rubric_version_id"
        ):
            shape = (kind, json.dumps(options, sort_keys=True))
            criteria[ext] = (pk, case_id, kind, options, version, shapes.setdefault(shape, shape))
        return responses, criteria

    def _target(self, obj, responses, criteria):
        response_id, criterion_id = obj["response_id"], obj["criterion_id"]
        try:
            response_pk, version = responses[response_id]
        except (KeyError, TypeError):
            v.string(obj, "response_id")
            raise v.FieldError("response_id", f"unknown response_id {response_id!r}") from None
        try:
            criterion = criteria[criterion_id]
        except (KeyError, TypeError):
            v.string(obj, "criterion_id")
            raise v.FieldError("criterion_id", f"unknown criterion_id {criterion_id!r}") from None
        if criterion[4] != version:  # not in the rubric the response's case is judged against
            raise v.FieldError("criterion_id", f"criterion_id {criterion_id!r} is not in the rubric of response {response_id!r}'s case")
        return response_pk, criterion

    def _labels(self) -> tuple[int, list]:
        """Validate labels.jsonl and write its new labels while reading it; returns how many were
        written and the changed ones (applied afterwards, with history)."""
        responses, criteria = self.lookups
        User = get_user_model()
        users = dict(User.objects.values_list(User.USERNAME_FIELD, "pk"))
        referenced: set[int] = set()
        members = {
            user_id: (cohort_id, role)
            for user_id, cohort_id, role in CohortMembership.objects.filter(project=self.project)
            .values_list("user_id", "cohort_id", "role")
        }
        existing, checked = {}, {}
        for pk, r, c, a, cohort, verdict, option, value, rationale, evidence, role in _plain_rows(
            f"SELECT id, response_id, criterion_id, annotator_id, cohort_id, verdict, option_label, value, rationale,"
            f" evidence, role FROM {Label._meta.db_table} WHERE project_id = %s",
            [self.project.pk],
        ):
            state = (pk, verdict, option, value, rationale, [] if evidence == "[]" else orjson.loads(evidence), role)
            if role == CohortMembership.CHECKER:
                # The cohort's checker label: one per (response, criterion, cohort), whoever recorded it.
                checked[(r, c, cohort)] = (*state, a)
            else:
                existing[(r, c, a)] = state
        changed: list[tuple] = []
        seen: set[tuple] = set()
        seen_checked: set[tuple] = set()
        decide = _DecisionMemo(allow_invalid=False)
        project_pk, batch_pk, stamp = self.project.pk, self.batch.pk, self.stamp
        cohort_pks = {name: cohort.pk for name, cohort in self.cohorts.items()}
        required = ("response_id", "criterion_id", "cohort", "annotator")
        optional = ("role", "verdict", "option", "value", "rationale", "evidence", "time_spent_seconds")
        required_set, allowed_set = set(required), set(required) | set(optional)
        out = RowWriter(
            Label._meta.db_table,
            ("project_id", "response_id", "criterion_id", "rubric_version_id", "cohort_id", "annotator_id", "role",
             "import_batch_id", "verdict", "option_label", "value", "rationale", "evidence", "time_spent_seconds",
             "revision", "created_at", "updated_at"),
            references_checked=True,
        )
        with self._stored("labels.jsonl"), out:
            for number, obj in self.reader.iter_jsonl("labels.jsonl"):
                try:
                    keys = obj.keys()
                    if not (required_set <= keys and keys <= allowed_set):
                        v.check_keys(obj, required=required, optional=optional)
                    response_pk, criterion = self._target(obj, responses, criteria)
                    cohort_name = obj["cohort"]
                    cohort_pk = cohort_pks.get(cohort_name) if type(cohort_name) is str else None
                    if cohort_pk is None:
                        v.string(obj, "cohort")
                        raise v.FieldError("cohort", f"unknown cohort {cohort_name!r} (declare it in project.json)")
                    username = obj["annotator"]
                    if type(username) is not str or not username.strip():
                        v.string(obj, "annotator", blank=False)
                        raise v.FieldError("annotator", "field 'annotator' must not be empty")
                    role = obj.get("role", "annotator")
                    if role not in ROLES:
                        v.choice(obj, "role", ROLES)
                    decision = decide(obj, criterion)
                    rationale = obj.get("rationale", "")
                    if type(rationale) is not str:
                        rationale = v.string(obj, "rationale", required=False, blank=True)
                    evidence = obj.get("evidence")
                    evidence = [] if evidence is None or evidence == [] else v.string_list(obj, "evidence")
                    seconds = obj.get("time_spent_seconds")
                    if seconds is not None:
                        seconds = v.number(obj, "time_spent_seconds")
                    if len(rationale) > MAX_RATIONALE or seconds is not None or len(evidence) > 0:
                        _caps_check(rationale, evidence, seconds)
                    if evidence:
                        self._quotes_check(response_pk, obj["response_id"], evidence, out)
                    user_pk = users.get(username)
                    if user_pk is None:  # the COPY pauses for the few new users and memberships
                        v.string(obj, "annotator", max_length=User._meta.get_field("username").max_length)
                        out.pause()
                        user_pk = users[username] = User.objects.create_user(username=username).pk
                    member = members.get(user_pk)
                    if member is None:
                        out.pause()
                        CohortMembership.objects.create(project=self.project, cohort_id=cohort_pk, user_id=user_pk, role=role)
                        members[user_pk] = (cohort_pk, role)
                    elif member[0] != cohort_pk:
                        raise v.FieldError("cohort", f"annotator {username!r} already belongs to another cohort of this project")
                    elif role == CohortMembership.CHECKER and member[1] != role:
                        out.pause()
                        CohortMembership.objects.filter(project=self.project, user_id=user_pk).update(role=role)
                        members[user_pk] = (cohort_pk, role)
                    key = (response_pk, criterion[0], user_pk)
                    if key in seen:
                        raise v.FieldError("annotator", f"duplicate label for ({obj['response_id']}, {obj['criterion_id']}, {username})")
                    seen.add(key)
                    if role == CohortMembership.CHECKER:
                        key = (response_pk, criterion[0], cohort_pk)
                        if key in seen_checked:
                            raise v.FieldError("annotator", f"a second checker label for ({obj['response_id']},"
                                                            f" {obj['criterion_id']}) in cohort {cohort_name!r}: a cohort"
                                                            " has one checker decision per item")
                        seen_checked.add(key)
                except (v.FieldError, DecisionError) as exc:
                    self._fail(exc, "labels.jsonl", number)
                referenced.add(user_pk)
                state = (decision.verdict, decision.option_label, decision.value, rationale, evidence, role)
                stored = checked.get(key) if role == CohortMembership.CHECKER else existing.get(key)
                if stored is not None:
                    if stored[1:7] != state or (role == CohortMembership.CHECKER and stored[7] != user_pk):
                        changed.append((stored[0], obj, decision, rationale, evidence, role, user_pk))
                    continue
                out.write((
                    project_pk, response_pk, criterion[0], criterion[4], cohort_pk, user_pk, role, batch_pk,
                    decision.verdict, decision.option_label, decision.value, rationale,
                    _json_text(evidence), seconds, 1, stamp, stamp,
                ))
        self._lock_users(referenced)
        return out.count, changed

    def _quotes_check(self, response_pk: int, response_id: str, quotes: list[str], out: RowWriter) -> None:
        """Every quote is verbatim in the response (as written or as rendered), as on every path of
        the write service; the responses' texts are read once, when the first quote needs them."""
        if self._quote_checkers is None:
            out.pause()  # the COPY pauses for this one read
            texts = _plain_rows(f"SELECT id, text FROM {Response._meta.db_table} WHERE project_id = %s", [self.project.pk])
            self._quote_checkers = {pk: text for pk, text in texts}
        check = self._quote_checkers[response_pk]
        if isinstance(check, str):
            check = self._quote_checkers[response_pk] = response_quote_checker(check)
        for quote in quotes:
            if not check(quote):
                raise v.FieldError("evidence", f"the quote {quote[:60]!r} is not part of response {response_id!r}'s text")

    def _label_changes_apply(self, changed: list) -> int:
        """The labels a re-import changes, through the one write service: it replaces what is stored
        (an import says so; its history rows are marked "replace") and keeps the old state."""
        keys = {pk: (r, c, cohort) for pk, r, c, cohort in Label.objects.filter(pk__in=[c[0] for c in changed])
                .values_list("pk", "response_id", "criterion_id", "cohort_id")}
        changes = []
        for pk, _obj, decision, rationale, evidence, role, user_pk in changed:
            response_id, criterion_id, cohort_id = keys[pk]
            changes.append(LabelChange(
                criterion_id=criterion_id, response_id=response_id, cohort_id=cohort_id, owner_id=user_pk, role=role,
                verdict=decision.verdict, option_label=decision.option_label,
                value=decision.value if decision.option_label is None and decision.verdict is None else None,
                rationale=rationale, evidence=evidence,
            ))
        for start in range(0, len(changes), 2000):
            labels_write(changes=changes[start:start + 2000], user=self.user, action=LabelHistory.IMPORT, replace=True,
                         note=f"re-import of {self.reader.path.name}")
        return len(changed)

    def _label_history_write(self) -> None:
        """The "import" history row of every label this import copied in, in one statement."""
        labels_import_history(batch_id=self.batch.pk, project_id=self.project.pk, user=self.user,
                              note=f"import of {self.reader.path.name}")

    def _existing_judgments(self) -> dict:
        return {
            (j, r, c, sample): (pk, verdict, option, value, bool(valid))
            for pk, j, r, c, sample, verdict, option, value, valid in _plain_rows(
                f"SELECT t.id, t.judge_id, t.response_id, t.criterion_id, t.sample, t.verdict, t.option_label, t.value,"
                f" t.valid FROM {Judgment._meta.db_table} t JOIN {Judge._meta.db_table} j ON j.id = t.judge_id"
                f" WHERE j.project_id = %s",
                [self.project.pk],
            )
        }

    def _judgments(self, existing: dict) -> int:
        """Validate judgments.jsonl and write its new judgments while reading it; judges named
        for the first time are created on the way (the COPY pauses for them)."""
        responses, criteria = self.lookups
        changed: list[tuple[int, object, bool, dict]] = []
        seen: set[tuple] = set()
        decide = _DecisionMemo(allow_invalid=True)
        judges: dict[tuple, tuple[Judge, str, str]] = {}
        stamp = self.stamp
        required = ("response_id", "criterion_id", "judge")
        optional = ("judge_model", "condition", "sample", "verdict", "option", "value", "explanation",
                    "evidence", "raw", "tokens_in", "tokens_out", "latency_ms")
        required_set, allowed_set = set(required), set(required) | set(optional)
        out = RowWriter(
            Judgment._meta.db_table,
            ("judge_id", "response_id", "criterion_id", "rubric_version_id", "sample", "condition", "verdict",
             "option_label", "value", "valid", "evidence_capped", "explanation", "evidence", "raw", "tokens_in",
             "tokens_out", "latency_ms", "cost_usd", "created_at"),
            references_checked=True,
        )
        with self._stored("judgments.jsonl"), out:
            for number, obj in self.reader.iter_jsonl("judgments.jsonl"):
                try:
                    keys = obj.keys()
                    if not (required_set <= keys and keys <= allowed_set):
                        v.check_keys(obj, required=required, optional=optional)
                    response_pk, criterion = self._target(obj, responses, criteria)
                    judge_key = (obj["judge"], obj.get("condition"), obj.get("judge_model"))
                    try:
                        judge = judges.get(judge_key) if type(judge_key[0]) is str else None
                    except TypeError:  # an unhashable value, which _judge_for names
                        judge = None
                    if judge is None:
                        found = self._judge_for(obj, out)
                        judge = judges[judge_key] = (found, found.condition, found.name)
                    sample = obj.get("sample", 0)
                    if type(sample) is not int or not 0 <= sample <= v.SMALLINT_MAX:
                        sample = v.integer(obj, "sample", default=0, maximum=v.SMALLINT_MAX)
                    decision = decide(obj, criterion)
                    explanation, raw = obj.get("explanation", ""), obj.get("raw", "")
                    if type(explanation) is not str or type(raw) is not str:
                        explanation = v.string(obj, "explanation", required=False, blank=True)
                        raw = v.string(obj, "raw", required=False, blank=True)
                    evidence = obj.get("evidence")
                    evidence = [] if evidence is None or evidence == [] else v.string_list(obj, "evidence")
                    tokens_in = v.integer(obj, "tokens_in", default=0, maximum=v.INT_MAX) if "tokens_in" in obj else 0
                    tokens_out = v.integer(obj, "tokens_out", default=0, maximum=v.INT_MAX) if "tokens_out" in obj else 0
                    latency = v.number(obj, "latency_ms") if "latency_ms" in obj else None
                    key = (judge[0].pk, response_pk, criterion[0], sample)
                    if key in seen:
                        raise v.FieldError("sample", f"duplicate judgment for ({obj['response_id']}, {obj['criterion_id']},"
                                                     f" {judge[2]}, sample {sample})")
                    seen.add(key)
                except (v.FieldError, DecisionError) as exc:
                    self._fail(exc, "judgments.jsonl", number)
                valid = not decision.is_empty
                if key in existing:
                    if existing[key][1:] != (decision.verdict, decision.option_label, decision.value, valid):
                        changed.append((existing[key][0], decision, valid, {"explanation": explanation, "evidence": evidence, "raw": raw}))
                    continue
                out.write((
                    judge[0].pk, response_pk, criterion[0], criterion[4], sample, judge[1], decision.verdict,
                    decision.option_label, decision.value, valid, False, explanation,
                    _json_text(evidence), raw,
                    tokens_in, tokens_out, latency, 0, stamp,
                ))
        for pk, decision, valid, extra in changed:
            Judgment.objects.filter(pk=pk).update(
                verdict=decision.verdict, option_label=decision.option_label, value=decision.value, valid=valid, **extra
            )
        return out.count + len(changed)

    def _lock_users(self, user_ids: set[int]) -> None:
        """Lock the users the new labels name against deletion until the import commits (their
        COPY skipped the foreign-key triggers), and make sure none was deleted meanwhile."""
        if not user_ids or connection.vendor != "postgresql":
            return  # SQLite serializes writers: nobody deleted anything while the import ran
        User = get_user_model()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM {connection.ops.quote_name(User._meta.db_table)} WHERE id = ANY(%s) FOR KEY SHARE",
                [sorted(user_ids)],
            )
            missing = user_ids - {row[0] for row in cursor.fetchall()}
        if missing:
            raise BundleError("labels.jsonl", f"{len(missing)} annotator account(s) were deleted while importing; import again")

    @contextmanager
    def _stored(self, name: str):
        """A row the database refuses while a file's rows stream in is the file's error."""
        try:
            yield
        except InsertFailed as exc:
            raise BundleError(name, f"the database refused a row: {exc}") from exc

    def _judge_for(self, obj: dict, out: RowWriter) -> Judge:
        name = v.string(obj, "judge")
        model = v.string(obj, "judge_model", required=False)
        condition = obj.get("condition")
        if condition is not None:
            v.choice(obj, "condition", (Judge.ATTRIBUTED, Judge.ANONYMIZED))
        judge = self.judges.get(name)
        if judge is None:
            out.pause()
            judge = self.judges[name] = Judge.objects.create(
                project=self.project, name=name, backend=Judge.REPLAY, model=model, condition=condition or Judge.ANONYMIZED,
            )
        elif condition is not None and condition != judge.condition:
            raise v.FieldError("condition", f"condition {condition!r} differs from judge {name!r}'s condition {judge.condition!r}")
        return judge


def _json_text(evidence: list[str]) -> str:
    """A quote list as the JSON text its column stores, compact: orjson writes it in a tenth of the
    time of ``json.dumps`` (millions of judgments); the database reads the same value either way."""
    return orjson.dumps(evidence).decode() if evidence else "[]"


def _plain_rows(sql: str, params: list) -> list[tuple]:
    """Rows straight from the cursor: a re-import compares every stored label and judgment,
    and the ORM's per-row conversion took longer than the rest of the re-import. JSON columns
    arrive as text on both databases."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _decision_fields(obj: dict, *, allow_invalid: bool) -> dict:
    present = {k: obj[k] for k in ("verdict", "option", "value") if k in obj}
    if not present and not allow_invalid:
        raise v.FieldError("verdict", "missing field 'verdict' (or 'option' / 'value')")
    return present


class _DecisionMemo:
    """Validates a line's decision against its criterion, remembering every (criterion shape,
    decision) pair already seen: a study repeats a handful of them 10^5 times. The shape is
    the criterion's kind and options, which are all the validation looks at."""

    def __init__(self, *, allow_invalid: bool):
        self.allow_invalid = allow_invalid
        self.memo: dict[tuple, object] = {}

    def __call__(self, obj: dict, criterion: tuple):
        value = obj.get("value")
        key = (criterion[5], obj.get("verdict"), obj.get("option"), value, type(value), "verdict" in obj)
        try:
            return self.memo[key]
        except (KeyError, TypeError):  # TypeError: an unhashable value, which validation rejects
            pass
        decision = decision_validate(
            kind=criterion[2], options=criterion[3], **_decision_args(obj, allow_invalid=self.allow_invalid)
        )
        self.memo[key] = decision
        return decision


def _decision_args(obj: dict, *, allow_invalid: bool) -> dict:
    fields = _decision_fields(obj, allow_invalid=allow_invalid)
    return {"verdict": fields.get("verdict"), "option_label": fields.get("option"), "value": fields.get("value"),
            "allow_invalid": allow_invalid}


def _caps_check(rationale: str, evidence: list, seconds) -> None:
    """The write service's caps on what a person typed, as a field error of the line."""
    try:
        label_input_check(rationale=rationale, quotes=evidence, time_spent_seconds=seconds)
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise v.FieldError("evidence" if field == "quote" else field, messages[0]) from None
