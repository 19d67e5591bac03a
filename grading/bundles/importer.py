"""Importing a bundle (SPEC §4) in one transaction: the first bad line aborts the import,
nothing is written, and the error names the file, the line and the field. Ids are the
keys, so re-importing the same bundle writes nothing; a changed rubric becomes a new rubric
version; a changed label is updated with a history entry.

Large files are streamed: labels and judgments go to the database through ``fastinsert``
(PostgreSQL COPY) as they are validated, so memory stays flat at benchmark scale.
"""
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from annotation.decisions import DecisionError, decision_validate
from annotation.models import Case, Cohort, CohortMembership, Criterion, ImportBatch, Label, Project, Response, RubricVersion
from annotation.rubrics import rubrics_freeze
from annotation.services import label_save

from ..judges.settings import SettingsError, judge_settings_parse
from ..models import Judge, Judgment
from . import validate as v
from .errors import BundleError
from evalsite.fastinsert import PendingInsert, insert_rows, lock_key_share
from .reader import BundleReader

ROLES = (CohortMembership.ANNOTATOR, CohortMembership.CHECKER)
JUDGE_BACKENDS = tuple(choice for choice, _ in Judge.BACKENDS)
PROJECT_FIELDS = (
    "name", "description", "blind", "coverage_k", "overlap", "low_agreement_threshold",
    "show_reference_answer", "rubric", "cohorts", "judges",
)
JUDGE_FIELDS = (
    "backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples",
    "concurrency", "max_retries", "price_in_per_mtok", "price_out_per_mtok", "settings",
)


@dataclass(frozen=True)
class ImportResult:
    project: str
    cases: int
    criteria: int
    responses: int
    labels: int
    judgments: int

    def as_dict(self) -> dict:
        return asdict(self)


def bundle_import(*, path: str | Path, user=None) -> ImportResult:
    """Import the bundle at ``path`` (a directory or a .zip); raises ``BundleError``."""
    with BundleReader(path) as reader:
        return _Importer(reader, user).run()


def _decision_fields(obj: dict, *, allow_invalid: bool) -> dict:
    present = {k: obj[k] for k in ("verdict", "option", "value") if k in obj}
    if not present and not allow_invalid:
        raise v.FieldError("verdict", "missing field 'verdict' (or 'option' / 'value')")
    return present


class _Importer:
    def __init__(self, reader: BundleReader, user):
        self.reader = reader
        self.user = user
        self.now = timezone.now()
        # Timestamps go to the bulk inserts already in database form, once, not per row.
        self.stamp = self.now.isoformat() if connection.vendor == "postgresql" else connection.ops.adapt_datetimefield_value(self.now)

    # -- helpers ---------------------------------------------------------------------------
    def _lines(self, name: str):
        """Yield (line, obj) and turn any FieldError raised by the caller into a BundleError."""
        for number, obj in self.reader.iter_jsonl(name):
            self._where = (name, number)
            yield number, obj

    def _fail(self, exc: v.FieldError | DecisionError, name: str | None = None, line: int | None = None):
        name, line = (name, line) if name else self._where
        raise BundleError(name, exc.message, line=line, field=exc.field) from exc

    # -- steps -----------------------------------------------------------------------------
    def run(self) -> ImportResult:
        data = self.reader.read_json("project.json")
        try:
            v.check_keys(data, required=("slug", "name"), optional=PROJECT_FIELDS)
            slug = v.string(data, "slug")
            if not v.SLUG_RE.match(slug):
                raise v.FieldError("slug", f"slug {slug!r} may hold only letters, digits, '-' and '_'")
            settings = {
                "name": v.string(data, "name"),
                "description": v.string(data, "description", required=False, blank=True),
                "blind": bool(data.get("blind", True)),
                "coverage_k": v.integer(data, "coverage_k", default=None),
                "overlap": v.integer(data, "overlap", default=1, minimum=1),
                "low_agreement_threshold": v.number(data, "low_agreement_threshold", default=0.6),
                "show_reference_answer": bool(data.get("show_reference_answer", False)),
            }
            rubric = [v.criterion(c, prefix=f"rubric[{i}].") for i, c in enumerate(data.get("rubric") or [])]
            cohorts = data.get("cohorts") or []
            for i, cohort in enumerate(cohorts):
                if not isinstance(cohort, dict):
                    raise v.FieldError(f"cohorts[{i}]", "a cohort must be a JSON object")
                v.check_keys(cohort, required=("name",), optional=(), prefix=f"cohorts[{i}].")
                v.string(cohort, "name", prefix=f"cohorts[{i}].")
            judges = [self._judge_spec(j, i) for i, j in enumerate(data.get("judges") or [])]
        except v.FieldError as exc:
            self._fail(exc, "project.json")
        self.seen_criteria: dict[str, str] = {}
        for i, spec in enumerate(rubric):
            self._claim_criterion(spec["criterion_id"], f"rubric[{i}].criterion_id", "project.json", None)

        with transaction.atomic():
            self.project = self._project(slug, settings)
            self.batch = ImportBatch.objects.create(
                project=self.project, bundle_sha256=self.reader.sha256(), source=str(self.reader.path),
                imported_by=self.user,
            )
            self.cohorts = self._cohorts([c["name"] for c in cohorts])
            self.judges = self._judges(judges)
            cases_written, case_rubrics = self._cases()
            criteria_written = self._rubrics(rubric, case_rubrics)
            responses_written = self._responses()
            self.lookups = self._lookups()
            existing_judgments = self._existing_judgments()
            label_copy, label_changes = self._labels()
            try:
                judgment_rows, judgment_changes = self._judgments(existing_judgments)
            finally:
                labels_written = label_copy.wait()  # never leave a COPY running on an error
            labels_written += self._label_changes_apply(label_changes)
            judgments_written = self._judgments_write(judgment_rows, judgment_changes)
            counts = {
                "cases": cases_written, "criteria": criteria_written, "responses": responses_written,
                "labels": labels_written, "judgments": judgments_written,
            }
            if any(counts.values()) or self.project_written:
                self.batch.counts = counts
                self.batch.save(update_fields=["counts"])
            else:
                self.batch.delete()  # nothing changed: leave no trace
        return ImportResult(project=slug, **counts)

    def _judge_spec(self, obj: object, i: int) -> dict:
        prefix = f"judges[{i}]."
        if not isinstance(obj, dict):
            raise v.FieldError(prefix.rstrip("."), "a judge must be a JSON object")
        v.check_keys(obj, required=("name",), optional=JUDGE_FIELDS, prefix=prefix)
        spec = {
            "name": v.string(obj, "name", prefix=prefix),
            "backend": v.choice(obj, "backend", JUDGE_BACKENDS, prefix=prefix, default=Judge.REPLAY),
            "model": v.string(obj, "model", prefix=prefix, required=False),
            "base_url": v.string(obj, "base_url", prefix=prefix, required=False),
            "api_key_env": v.string(obj, "api_key_env", prefix=prefix, required=False),
            "condition": v.choice(obj, "condition", (Judge.ATTRIBUTED, Judge.ANONYMIZED), prefix=prefix, default=Judge.ANONYMIZED),
            "temperature": v.number(obj, "temperature", prefix=prefix, default=0.0),
            "samples": v.integer(obj, "samples", prefix=prefix, default=1, minimum=1),
            "concurrency": v.integer(obj, "concurrency", prefix=prefix, default=8, minimum=1),
            "max_retries": v.integer(obj, "max_retries", prefix=prefix, default=3),
            "price_in_per_mtok": v.number(obj, "price_in_per_mtok", prefix=prefix, default=0.0),
            "price_out_per_mtok": v.number(obj, "price_out_per_mtok", prefix=prefix, default=0.0),
            "settings": obj.get("settings") or {},
        }
        try:
            judge_settings_parse(spec["settings"])
        except SettingsError as exc:
            raise v.FieldError(f"{prefix}settings.{exc.key}".rstrip("."), f"{prefix}settings.{exc.key}: {exc.message}") from exc
        return spec

    def _claim_criterion(self, criterion_id: str, field: str, name: str, line: int | None) -> None:
        if criterion_id in self.seen_criteria:
            raise BundleError(
                name, f"duplicate criterion_id {criterion_id!r} (first in {self.seen_criteria[criterion_id]})",
                line=line, field=field,
            )
        self.seen_criteria[criterion_id] = f"{name} line {line}" if line else name

    def _project(self, slug: str, settings: dict) -> Project:
        project = Project.objects.filter(slug=slug).first()
        self.project_written = False
        if project is None:
            self.project_written = True
            return Project.objects.create(slug=slug, **settings)
        changed = [f for f, value in settings.items() if getattr(project, f) != value]
        if changed:
            for field in changed:
                setattr(project, field, settings[field])
            project.save(update_fields=changed)
            self.project_written = True
        return project

    def _cohorts(self, names: list[str]) -> dict[str, Cohort]:
        existing = {c.name: c for c in Cohort.objects.filter(project=self.project)}
        for position, name in enumerate(names):
            if name not in existing:
                existing[name] = Cohort.objects.create(project=self.project, name=name, position=position)
                self.project_written = True
        return existing

    def _judges(self, specs: list[dict]) -> dict[str, Judge]:
        existing = {j.name: j for j in Judge.objects.filter(project=self.project)}
        for spec in specs:
            judge = existing.get(spec["name"])
            values = {k: val for k, val in spec.items() if k != "name"}
            if judge is None:
                existing[spec["name"]] = Judge.objects.create(project=self.project, name=spec["name"], **values)
                self.project_written = True
                continue
            changed = [k for k, val in values.items() if _differs(getattr(judge, k), val)]
            if changed:
                for k in changed:
                    setattr(judge, k, values[k])
                judge.save(update_fields=changed)
                self.project_written = True
        return existing

    def _cases(self) -> tuple[int, list[tuple[str, list[dict]]]]:
        existing = {
            ext: (pk, (prompt, messages, ref, metadata))
            for pk, ext, prompt, messages, ref, metadata in Case.objects.filter(project=self.project).values_list(
                "pk", "external_id", "prompt", "messages", "reference_answer", "metadata"
            )
        }
        position = Case.objects.filter(project=self.project).count()
        seen: set[str] = set()
        new_cases: list[Case] = []
        case_rubrics: list[tuple[str, list[dict]]] = []
        for number, obj in self._lines("cases.jsonl"):
            try:
                v.check_keys(obj, required=("case_id",), optional=("prompt", "messages", "reference_answer", "metadata", "criteria"))
                case_id = v.string(obj, "case_id")
                if case_id in seen:
                    raise v.FieldError("case_id", f"duplicate case_id {case_id!r}")
                seen.add(case_id)
                if ("prompt" in obj) == ("messages" in obj):
                    raise v.FieldError("prompt", "give exactly one of 'prompt' or 'messages'")
                prompt = v.string(obj, "prompt") if "prompt" in obj else ""
                messages = v.messages(obj["messages"]) if "messages" in obj else None
                reference = v.string(obj, "reference_answer", required=False, blank=True)
                metadata = v.metadata(obj.get("metadata"))
                criteria = obj.get("criteria") or []
                if not isinstance(criteria, list):
                    raise v.FieldError("criteria", "field 'criteria' must be a list")
                specs = [v.criterion(c, prefix=f"criteria[{i}].") for i, c in enumerate(criteria)]
            except v.FieldError as exc:
                self._fail(exc)
            for i, spec in enumerate(specs):
                self._claim_criterion(spec["criterion_id"], f"criteria[{i}].criterion_id", "cases.jsonl", number)
            content = (prompt, messages, reference, metadata)
            if case_id in existing:
                if existing[case_id][1] != content:
                    raise BundleError(
                        "cases.jsonl", f"case {case_id!r} already exists with different content; cases are not edited by import",
                        line=number, field="case_id",
                    )
            else:
                new_cases.append(
                    Case(
                        project=self.project, external_id=case_id, position=position, prompt=prompt, messages=messages,
                        reference_answer=reference, metadata=metadata, difficulty=metadata.get("difficulty") or "",
                        register=metadata.get("register") or "",
                    )
                )
                position += 1
            if specs:
                case_rubrics.append((case_id, specs))
        Case.objects.bulk_create(new_cases, batch_size=1000)
        return len(new_cases), case_rubrics

    def _rubrics(self, rubric: list[dict], case_rubrics: list[tuple[str, list[dict]]]) -> int:
        cases = {c.external_id: c for c in Case.objects.filter(project=self.project)}
        scopes: list = [(None, rubric)] if rubric else []
        scopes += [(cases[case_id], specs) for case_id, specs in case_rubrics]
        # A criterion id already used in another scope of this project is a duplicate too.
        owners = dict(
            self.project.criteria.values_list("external_id", "case__external_id")
        )
        for case, specs in scopes:
            for spec in specs:
                owner = owners.get(spec["criterion_id"], "missing")
                if owner != "missing" and owner != (case.external_id if case else None):
                    where = f"case {owner!r}" if owner else "the project rubric"
                    raise BundleError(
                        "cases.jsonl" if case else "project.json",
                        f"criterion_id {spec['criterion_id']!r} already belongs to {where}", field="criterion_id",
                    )
        results = rubrics_freeze(project=self.project, scopes=scopes)
        return sum(len(specs) for (_, specs), (_, changed) in zip(scopes, results) if changed)

    def _responses(self) -> int:
        cases = dict(Case.objects.filter(project=self.project).values_list("external_id", "pk"))
        existing = {
            ext: (case_id, model, kind, text)
            for ext, case_id, model, kind, text in Response.objects.filter(project=self.project).values_list(
                "external_id", "case_id", "model", "author_kind", "text"
            )
        }
        position = len(existing)
        seen: set[str] = set()
        rows = []
        for number, obj in self._lines("responses.jsonl"):
            try:
                v.check_keys(obj, required=("response_id", "case_id", "model", "text"), optional=("author_kind",))
                response_id = v.string(obj, "response_id")
                if response_id in seen:
                    raise v.FieldError("response_id", f"duplicate response_id {response_id!r}")
                seen.add(response_id)
                case_id = v.string(obj, "case_id")
                if case_id not in cases:
                    raise v.FieldError("case_id", f"unknown case_id {case_id!r}")
                model = v.string(obj, "model")
                text = v.string(obj, "text", blank=True)
                kind = v.choice(obj, "author_kind", (Response.MODEL, Response.HUMAN), default=Response.MODEL)
            except v.FieldError as exc:
                self._fail(exc)
            content = (cases[case_id], model, kind, text)
            if response_id in existing:
                if existing[response_id] != content:
                    raise BundleError(
                        "responses.jsonl", f"response {response_id!r} already exists with different content",
                        line=number, field="response_id",
                    )
                continue
            rows.append((self.project.pk, cases[case_id], response_id, position, model, kind, text))
            position += 1
        return insert_rows(
            Response._meta.db_table,
            ("project_id", "case_id", "external_id", "position", "model", "author_kind", "text"),
            rows,
        )

    def _lookups(self):
        """Maps from external ids to what label and judgment lines need, in a few queries; the
        rows they point at are locked against deletion until the import commits."""
        lock_key_share(Project._meta.db_table, "id = %s", [self.project.pk])
        for model in (Response, Criterion, Cohort, RubricVersion):
            lock_key_share(model._meta.db_table, "project_id = %s", [self.project.pk])
        lock_key_share(Judge._meta.db_table, "project_id = %s", [self.project.pk])
        responses = {
            ext: (pk, case_id)
            for ext, pk, case_id in Response.objects.filter(project=self.project).values_list("external_id", "pk", "case_id")
        }
        criteria = {}
        cases_with_own = set()
        for ext, pk, case_id, kind, options, version in self.project.criteria.values_list(
            "external_id", "pk", "case_id", "kind", "options", "rubric_version_id"
        ):
            criteria[ext] = (pk, case_id, kind, options, version)
            if case_id is not None:
                cases_with_own.add(case_id)
        return responses, criteria, cases_with_own

    def _target(self, obj, responses, criteria, cases_with_own):
        response_id, criterion_id = obj["response_id"], obj["criterion_id"]
        try:
            response_pk, case_pk = responses[response_id]
        except (KeyError, TypeError):
            v.string(obj, "response_id")
            raise v.FieldError("response_id", f"unknown response_id {response_id!r}") from None
        try:
            criterion = criteria[criterion_id]
        except (KeyError, TypeError):
            v.string(obj, "criterion_id")
            raise v.FieldError("criterion_id", f"unknown criterion_id {criterion_id!r}") from None
        applies = criterion[1] == case_pk if criterion[1] is not None else case_pk not in cases_with_own
        if not applies:
            raise v.FieldError("criterion_id", f"criterion_id {criterion_id!r} is not in the rubric of response {response_id!r}'s case")
        return response_pk, criterion

    def _labels(self) -> tuple[PendingInsert, list]:
        responses, criteria, cases_with_own = self.lookups
        User = get_user_model()
        users = dict(User.objects.values_list("username", "pk"))
        members = {
            user_id: (cohort_id, role)
            for user_id, cohort_id, role in CohortMembership.objects.filter(project=self.project).values_list("user_id", "cohort_id", "role")
        }
        existing = {
            (r, c, a): (pk, verdict, option, value, rationale, evidence, role)
            for pk, r, c, a, verdict, option, value, rationale, evidence, role in Label.objects.filter(project=self.project).values_list(
                "pk", "response_id", "criterion_id", "annotator_id", "verdict", "option_label", "value", "rationale", "evidence", "role"
            )
        }
        changed: list[tuple[int, dict]] = []
        seen: set[tuple] = set()
        decide = _DecisionMemo(allow_invalid=False)
        project_pk, batch_pk, stamp = self.project.pk, self.batch.pk, self.stamp
        cohort_pks = {name: cohort.pk for name, cohort in self.cohorts.items()}
        required = ("response_id", "criterion_id", "cohort", "annotator")
        optional = ("role", "verdict", "option", "value", "rationale", "evidence", "time_spent_seconds")
        required_set, allowed_set = set(required), set(required) | set(optional)

        def rows():
            for number, obj in self.reader.iter_jsonl("labels.jsonl"):
                try:
                    keys = obj.keys()
                    if not (required_set <= keys and keys <= allowed_set):
                        v.check_keys(obj, required=required, optional=optional)
                    response_pk, criterion = self._target(obj, responses, criteria, cases_with_own)
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
                    user_pk = users.get(username)
                    if user_pk is None:
                        user_pk = users[username] = User.objects.create_user(username=username).pk
                    member = members.get(user_pk)
                    if member is None:
                        CohortMembership.objects.create(project=self.project, cohort_id=cohort_pk, user_id=user_pk, role=role)
                        members[user_pk] = (cohort_pk, role)
                    elif member[0] != cohort_pk:
                        raise v.FieldError("cohort", f"annotator {username!r} already belongs to another cohort of this project")
                    elif role == CohortMembership.CHECKER and member[1] != role:
                        CohortMembership.objects.filter(project=self.project, user_id=user_pk).update(role=role)
                        members[user_pk] = (cohort_pk, role)
                    key = (response_pk, criterion[0], user_pk)
                    if key in seen:
                        raise v.FieldError("annotator", f"duplicate label for ({obj['response_id']}, {obj['criterion_id']}, {username})")
                    seen.add(key)
                except (v.FieldError, DecisionError) as exc:
                    self._fail(exc, "labels.jsonl", number)
                state = (decision.verdict, decision.option_label, decision.value, rationale, evidence, role)
                if key in existing:
                    if existing[key][1:] != state:
                        changed.append((existing[key][0], obj, decision, rationale, evidence, role))
                    continue
                yield (
                    project_pk, response_pk, criterion[0], criterion[4], cohort_pk, user_pk, role, batch_pk,
                    decision.verdict, decision.option_label, decision.value, rationale,
                    json.dumps(evidence) if evidence else "[]", seconds, 1, stamp, stamp,
                )

        # Validate everything first: PostgreSQL's COPY holds the connection, so the users and
        # memberships created while validating must be written before it starts.
        label_rows = list(rows())
        # Validation is done and the users and memberships it needed exist: the server can
        # now insert the labels while Python validates the judgments.
        pending = PendingInsert(
            Label._meta.db_table,
            ("project_id", "response_id", "criterion_id", "rubric_version_id", "cohort_id", "annotator_id", "role",
             "import_batch_id", "verdict", "option_label", "value", "rationale", "evidence", "time_spent_seconds",
             "revision", "created_at", "updated_at"),
            label_rows,
            references_checked=self._lock_users({row[5] for row in label_rows}),
        )
        return pending, changed

    def _label_changes_apply(self, changed: list) -> int:
        for pk, obj, decision, rationale, evidence, role in changed:
            label = Label.objects.select_related("response", "criterion", "cohort", "annotator").get(pk=pk)
            label_save(
                response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
                changed_by=self.user, role=role, verdict=decision.verdict, option_label=decision.option_label,
                value=decision.value if decision.option_label is None else None, rationale=rationale, evidence=evidence,
                action="import", note=f"re-import of {self.reader.path.name}",
            )
        return len(changed)

    def _existing_judgments(self) -> dict:
        return {
            (j, r, c, s): (pk, verdict, option, value, valid)
            for pk, j, r, c, s, verdict, option, value, valid in Judgment.objects.filter(judge__project=self.project).values_list(
                "pk", "judge_id", "response_id", "criterion_id", "sample", "verdict", "option_label", "value", "valid"
            )
        }

    def _judgments(self, existing: dict) -> tuple[list[tuple], list]:
        """Validate judgments.jsonl without touching the database (the labels' COPY may be
        running on the connection); judges it names for the first time are created later."""
        responses, criteria, cases_with_own = self.lookups
        changed: list[tuple[int, object, bool, dict]] = []
        seen: set[tuple] = set()
        decide = _DecisionMemo(allow_invalid=True)
        judges: dict[tuple, tuple[Judge, str, str]] = {}
        stamp = self.stamp
        required = ("response_id", "criterion_id", "judge")
        optional = ("judge_model", "condition", "sample", "verdict", "option", "value", "explanation",
                    "evidence", "raw", "tokens_in", "tokens_out", "latency_ms")
        required_set, allowed_set = set(required), set(required) | set(optional)

        def rows():
            for number, obj in self.reader.iter_jsonl("judgments.jsonl"):
                try:
                    keys = obj.keys()
                    if not (required_set <= keys and keys <= allowed_set):
                        v.check_keys(obj, required=required, optional=optional)
                    response_pk, criterion = self._target(obj, responses, criteria, cases_with_own)
                    judge_key = (obj["judge"], obj.get("condition"), obj.get("judge_model"))
                    judge = judges.get(judge_key) if type(judge_key[0]) is str else None
                    if judge is None:
                        found = self._judge_for(obj)
                        judge = judges[judge_key] = (found, found.condition, found.name)
                    sample = obj.get("sample", 0)
                    if type(sample) is not int or sample < 0:
                        sample = v.integer(obj, "sample", default=0)
                    decision = decide(obj, criterion)
                    explanation, raw = obj.get("explanation", ""), obj.get("raw", "")
                    if type(explanation) is not str or type(raw) is not str:
                        explanation = v.string(obj, "explanation", required=False, blank=True)
                        raw = v.string(obj, "raw", required=False, blank=True)
                    evidence = obj.get("evidence")
                    evidence = [] if evidence is None or evidence == [] else v.string_list(obj, "evidence")
                    tokens_in = v.integer(obj, "tokens_in", default=0) if "tokens_in" in obj else 0
                    tokens_out = v.integer(obj, "tokens_out", default=0) if "tokens_out" in obj else 0
                    latency = v.number(obj, "latency_ms") if "latency_ms" in obj else None
                    key = (judge[0].pk or judge[0].name, response_pk, criterion[0], sample)
                    if key in seen:
                        raise v.FieldError("sample", f"duplicate judgment for ({obj['response_id']}, {obj['criterion_id']}, {judge[2]}, sample {sample})")
                    seen.add(key)
                except (v.FieldError, DecisionError) as exc:
                    self._fail(exc, "judgments.jsonl", number)
                valid = not decision.is_empty
                if key in existing:
                    if existing[key][1:] != (decision.verdict, decision.option_label, decision.value, valid):
                        changed.append((existing[key][0], decision, valid, {"explanation": explanation, "evidence": evidence, "raw": raw}))
                    continue
                yield (
                    judge[0], response_pk, criterion[0], criterion[4], sample, judge[1], decision.verdict,
                    decision.option_label, decision.value, valid, False, explanation,
                    json.dumps(evidence) if evidence else "[]", raw,
                    tokens_in, tokens_out, latency, 0, stamp,
                )

        return list(rows()), changed

    def _judgments_write(self, rows: list[tuple], changed: list) -> int:
        for judge in self.judges.values():
            if judge.pk is None:
                judge.save()
        written = insert_rows(
            Judgment._meta.db_table,
            ("judge_id", "response_id", "criterion_id", "rubric_version_id", "sample", "condition", "verdict",
             "option_label", "value", "valid", "evidence_capped", "explanation", "evidence", "raw", "tokens_in",
             "tokens_out", "latency_ms", "cost_usd", "created_at"),
            [(row[0].pk, *row[1:]) for row in rows],
            references_checked=True,
        )
        for pk, decision, valid, extra in changed:
            Judgment.objects.filter(pk=pk).update(
                verdict=decision.verdict, option_label=decision.option_label, value=decision.value, valid=valid, **extra
            )
        return written + len(changed)

    def _lock_users(self, user_ids) -> bool:
        ids = list(user_ids)
        if ids:
            lock_key_share(get_user_model()._meta.db_table, "id = ANY(%s)", [ids])
        return True

    def _judge_for(self, obj: dict) -> Judge:
        name = v.string(obj, "judge")
        condition = obj.get("condition")
        if condition is not None:
            v.choice(obj, "condition", (Judge.ATTRIBUTED, Judge.ANONYMIZED))
        judge = self.judges.get(name)
        if judge is None:  # saved by _judgments_write, once the connection is free
            judge = self.judges[name] = Judge(
                project=self.project, name=name, backend=Judge.REPLAY,
                model=v.string(obj, "judge_model", required=False), condition=condition or Judge.ANONYMIZED,
            )
        elif condition is not None and condition != judge.condition:
            raise v.FieldError("condition", f"condition {condition!r} differs from judge {name!r}'s condition {judge.condition!r}")
        return judge


class _DecisionMemo:
    """Validates a line's decision against its criterion, remembering every (criterion,
    decision) pair already seen: a 30-criterion study repeats a few dozen of them 10^5 times."""

    def __init__(self, *, allow_invalid: bool):
        self.allow_invalid = allow_invalid
        self.memo: dict[tuple, object] = {}

    def __call__(self, obj: dict, criterion: tuple):
        value = obj.get("value")
        key = (criterion[0], obj.get("verdict"), obj.get("option"), value, type(value), "verdict" in obj)
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


def _differs(current, new) -> bool:
    try:
        return float(current) != float(new)
    except (TypeError, ValueError):
        return current != new
