"""Importing a bundle (SPEC §4) in one transaction: the first bad line aborts the import,
nothing is written, and the error names the file, the line and the field. Ids are the
keys, so re-importing the same bundle writes nothing; a changed rubric becomes a new rubric
version; a changed label is updated with a history entry.

A project's settings (name, blind, coverage_k, ...) come from project.json only when the import
creates the project. Over an existing project they are compared and left as they are, and the
result says which differ, unless the caller asks for ``update_settings``: then they are applied
through ``annotation.projects.project_settings_update``, which records them in the project's audit
trail. A setting project.json does not mention is never touched.

Labels and judgments are validated and written by ``records.LabelJudgmentSteps`` through
``evalsite.fastinsert`` (PostgreSQL COPY), so memory stays flat at benchmark scale.
"""
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from annotation.decisions import DecisionError
from annotation.models import Case, Cohort, Criterion, ImportBatch, Project, Response
from annotation.projects import (
    QUALITY_SETTINGS,
    SETTINGS,
    audit_record,
    project_settings_update,
    quality_settings_clean,
    settings_clean,
)
from annotation.rubrics import RubricChangeError, rubrics_freeze
from evalsite.fastinsert import insert_rows, tables_analyze

from ..judges.backends import backend_get, backend_names
from ..judges.endpoints import endpoint_problems
from ..judges.services import judge_snapshot
from ..judges.settings import SettingsError
from ..models import Judge
from . import validate as v
from .adjudications import AdjudicationStep
from .errors import BundleError
from .people import PeopleStep, people_clean
from .reader import BundleReader
from .records import LabelJudgmentSteps

PROJECT_FIELDS = (*SETTINGS, *QUALITY_SETTINGS, "rubric", "cohorts", "judges", "roles")
ID_LENGTH = Case._meta.get_field("external_id").max_length  # case and response ids: the columns' length
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
    adjudications: int = 0
    # {setting: [old, new]} applied to an existing project (only with ``update_settings``)
    settings_changed: dict = field(default_factory=dict)
    # {setting: [current, in the bundle]} that differ and were left as they are
    settings_ignored: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """SPEC §5's keys, plus adjudications and the two settings reports when they have something to say."""
        data = asdict(self)
        for key in ("adjudications", "settings_changed", "settings_ignored"):
            if not data[key]:
                del data[key]
        return data


def bundle_import(*, path: str | Path, user=None, update_settings: bool = False) -> ImportResult:
    """Import the bundle at ``path`` (a directory or a .zip); raises ``BundleError``.

    ``update_settings`` applies project.json's settings to an existing project, unblinding
    included (the explicit request is what allows it), recorded as an audit event by ``user``."""
    with BundleReader(path) as reader:
        return _Importer(reader, user, update_settings=update_settings).run()


class _Importer(LabelJudgmentSteps, AdjudicationStep, PeopleStep):
    def __init__(self, reader: BundleReader, user, *, update_settings: bool = False):
        self.reader = reader
        self.user = user
        self.update_settings = update_settings
        self.now = timezone.now()
        # Timestamps go to the bulk inserts already in database form, once, not per row.
        self.stamp = self.now.isoformat() if connection.vendor == "postgresql" else connection.ops.adapt_datetimefield_value(self.now)

    # -- helpers ---------------------------------------------------------------------------
    def _fail(self, exc: v.FieldError | DecisionError, name: str, line: int | None = None):
        """Turn a field error into the BundleError that names the file, line and field."""
        raise BundleError(name, exc.message, line=line, field=exc.field) from exc

    # -- steps -----------------------------------------------------------------------------
    def run(self) -> ImportResult:
        data = self.reader.read_json("project.json")
        try:
            v.check_keys(data, required=("slug", "name"), optional=PROJECT_FIELDS)
            slug = v.string(data, "slug")
            if not v.SLUG_RE.match(slug):
                raise v.FieldError("slug", f"slug {slug!r} may hold only letters, digits, '-' and '_'")
            if slug in Project.RESERVED_SLUGS:
                raise v.FieldError("slug", f"slug {slug!r} is reserved (a page of the site has that address)")
            settings = _settings(data)
            rubric = [v.criterion(c, prefix=f"rubric[{i}].") for i, c in enumerate(data.get("rubric") or [])]
            cohorts = data.get("cohorts") or []
            for i, cohort in enumerate(cohorts):
                if not isinstance(cohort, dict):
                    raise v.FieldError(f"cohorts[{i}]", "a cohort must be a JSON object")
                v.check_keys(cohort, required=("name",), optional=("members",), prefix=f"cohorts[{i}].")
                v.string(cohort, "name", prefix=f"cohorts[{i}].", max_length=Cohort._meta.get_field("name").max_length)
            judges = [self._judge_spec(j, i) for i, j in enumerate(data.get("judges") or [])]
            roles, members = people_clean(data)
        except v.FieldError as exc:
            self._fail(exc, "project.json")
        self.seen_criteria: dict[str, str] = {}
        for i, spec in enumerate(rubric):
            self._claim_criterion(spec["criterion_id"], f"rubric[{i}].criterion_id", "project.json", None)

        with transaction.atomic():
            self.project = self._project(slug, settings)
            self.batch = ImportBatch.objects.create(  # its digest is made while the files are read (issue 27)
                project=self.project, bundle_sha256="", source=str(self.reader.path), imported_by=self.user,
            )
            self.cohorts = self._cohorts([c["name"] for c in cohorts])
            self.judges = self._judges(judges)
            try:
                self._people(roles, members)
            except v.FieldError as exc:
                self._fail(exc, "project.json")
            cases_written, case_rubrics = self._cases()
            criteria_written = self._rubrics(rubric, case_rubrics)
            self._traits_check(settings.get("traits") or [])
            responses_written = self._responses()
            if self._quality():
                self.project_written = True
            self.lookups = self._lookups()
            existing_judgments = self._existing_judgments()
            labels_written, label_changes = self._labels()
            if labels_written:
                self._label_history_write()
            labels_written += self._label_changes_apply(label_changes)
            judgments_written = self._judgments(existing_judgments)
            adjudications_written = self._adjudications()
            settings_changed = self._settings_apply()
            counts = {
                "cases": cases_written, "criteria": criteria_written, "responses": responses_written,
                "labels": labels_written, "judgments": judgments_written,
            }
            if adjudications_written:
                counts["adjudications"] = adjudications_written
            if any(counts.values()) or self.project_written:
                self.batch.counts = counts
                self.batch.bundle_sha256 = self.reader.sha256()
                self.batch.save(update_fields=["counts", "bundle_sha256"])
            else:
                self.batch.delete()  # nothing changed: leave no trace
        if any(counts.values()):
            tables_analyze()  # fresh planner statistics for the pages that read the new rows
        return ImportResult(project=slug, **counts, settings_changed=settings_changed, settings_ignored=self.settings_ignored)

    def _judge_spec(self, obj: object, i: int) -> dict:
        prefix = f"judges[{i}]."
        if not isinstance(obj, dict):
            raise v.FieldError(prefix.rstrip("."), "a judge must be a JSON object")
        v.check_keys(obj, required=("name",), optional=JUDGE_FIELDS, prefix=prefix)
        spec = {
            "name": v.string(obj, "name", prefix=prefix, max_length=Judge._meta.get_field("name").max_length),
            "backend": v.choice(obj, "backend", tuple(backend_names()), prefix=prefix, default=Judge.REPLAY),
            "model": v.string(obj, "model", prefix=prefix, required=False, max_length=Judge._meta.get_field("model").max_length),
            "base_url": v.string(obj, "base_url", prefix=prefix, required=False,
                                 max_length=Judge._meta.get_field("base_url").max_length),
            "api_key_env": v.string(obj, "api_key_env", prefix=prefix, required=False,
                                    max_length=Judge._meta.get_field("api_key_env").max_length),
            "condition": v.choice(obj, "condition", (Judge.ATTRIBUTED, Judge.ANONYMIZED), prefix=prefix, default=Judge.ANONYMIZED),
            "temperature": v.number(obj, "temperature", prefix=prefix, default=0.0),
            "samples": v.integer(obj, "samples", prefix=prefix, default=1, minimum=1, maximum=v.SMALLINT_MAX),
            "concurrency": v.integer(obj, "concurrency", prefix=prefix, default=8, minimum=1, maximum=v.SMALLINT_MAX),
            "max_retries": v.integer(obj, "max_retries", prefix=prefix, default=3, maximum=v.SMALLINT_MAX),
            "price_in_per_mtok": v.number(obj, "price_in_per_mtok", prefix=prefix, default=0.0),
            "price_out_per_mtok": v.number(obj, "price_out_per_mtok", prefix=prefix, default=0.0),
            "settings": obj.get("settings") or {},
        }
        backend = backend_get(spec["backend"])
        try:
            backend.settings_parse(spec["settings"])
        except SettingsError as exc:
            raise v.FieldError(f"{prefix}settings.{exc.key}".rstrip("."), f"{prefix}settings.{exc.key}: {exc.message}") from exc
        problems = endpoint_problems(base_url=spec["base_url"] or "", api_key_env=spec["api_key_env"] or "",
                                     calls_out=backend.calls_out)
        if problems:
            field, message = next(iter(problems.items()))
            raise v.FieldError(f"{prefix}{field}", f"{prefix}{field}: {message}")
        return spec

    def _claim_criterion(self, criterion_id: str, field: str, name: str, line: int | None) -> None:
        if criterion_id in self.seen_criteria:
            raise BundleError(
                name, f"duplicate criterion_id {criterion_id!r} (first in {self.seen_criteria[criterion_id]})",
                line=line, field=field,
            )
        self.seen_criteria[criterion_id] = f"{name} line {line}" if line else name

    def _project(self, slug: str, settings: dict) -> Project:
        """The project, created with the bundle's settings if it is new. For an existing one the
        settings that differ are only noted here; ``_settings_apply`` deals with them."""
        project = Project.objects.filter(slug=slug).first()
        self.project_written = False
        self.settings_differing: dict[str, list] = {}
        self.settings_ignored: dict[str, list] = {}
        if project is None:
            self.project_written = True
            return Project.objects.create(slug=slug, **settings)
        self.settings_differing = {
            name: [getattr(project, name), value] for name, value in settings.items() if getattr(project, name) != value
        }
        if not self.update_settings:
            self.settings_ignored = self.settings_differing
        return project

    def _settings_apply(self) -> dict:
        """Apply the differing settings when asked to; returns {setting: [old, new]}. Done last, so
        the lock ``project_settings_update`` takes on the project row is held only to the commit."""
        if not (self.update_settings and self.settings_differing):
            return {}
        changed = project_settings_update(
            project=self.project, settings={name: new for name, (_, new) in self.settings_differing.items()},
            by=self.user, allow_unblinding=True, source=self.reader.path.name,
        )
        if changed:
            self.project.refresh_from_db()
            self.project_written = True
        return changed

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
                judge = existing[spec["name"]] = Judge.objects.create(project=self.project, name=spec["name"], **values)
                audit_record(project=self.project, actor=self.user, action="judge", target=judge.name, before=None,
                             after=judge_snapshot(judge), note=f"created by import of {self.reader.path.name}")
                self.project_written = True
                continue
            changed = [k for k, val in values.items() if _differs(getattr(judge, k), val)]
            if changed:
                before = judge_snapshot(judge)
                for k in changed:
                    setattr(judge, k, values[k])
                judge.save(update_fields=changed)
                audit_record(project=self.project, actor=self.user, action="judge", target=judge.name, before=before,
                             after=judge_snapshot(judge), note=f"changed by import of {self.reader.path.name}")
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
        for number, obj in self.reader.iter_jsonl("cases.jsonl"):
            try:
                v.check_keys(obj, required=("case_id",), optional=("prompt", "messages", "reference_answer", "metadata", "criteria"))
                case_id = v.string(obj, "case_id", max_length=ID_LENGTH)
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
                self._fail(exc, "cases.jsonl", number)
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
        try:
            results = rubrics_freeze(project=self.project, scopes=scopes, by=self.user)
        except RubricChangeError as exc:
            raise BundleError("cases.jsonl" if exc.case else "project.json", exc.message, field=exc.field) from exc
        return sum(len(specs) for (_, specs), (_, changed) in zip(scopes, results) if changed)

    def _traits_check(self, rules: list[dict]) -> None:
        """Each evidence rule of project.json's ``traits`` names an ordinal criterion of the
        project that checklist items score (SPEC §3 "Trait score")."""
        if not rules:
            return
        with_items = set(Criterion.objects.filter(project=self.project).exclude(checklist_of="")
                         .values_list("checklist_of", flat=True))
        for i, rule in enumerate(rules):
            if rule["trait"] not in with_items:
                raise BundleError("project.json", f"trait {rule['trait']!r} has no checklist items (criteria whose "
                                                  "checklist_of names it)", field=f"traits[{i}].trait")

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
        for number, obj in self.reader.iter_jsonl("responses.jsonl"):
            try:
                v.check_keys(obj, required=("response_id", "case_id", "model", "text"), optional=("author_kind",))
                response_id = v.string(obj, "response_id", max_length=ID_LENGTH)
                if response_id in seen:
                    raise v.FieldError("response_id", f"duplicate response_id {response_id!r}")
                seen.add(response_id)
                case_id = v.string(obj, "case_id", max_length=ID_LENGTH)
                if case_id not in cases:
                    raise v.FieldError("case_id", f"unknown case_id {case_id!r}")
                model = v.string(obj, "model", max_length=Response._meta.get_field("model").max_length)
                text = v.string(obj, "text", blank=True)
                kind = v.choice(obj, "author_kind", (Response.MODEL, Response.HUMAN), default=Response.MODEL)
            except v.FieldError as exc:
                self._fail(exc, "responses.jsonl", number)
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
        with self._stored("responses.jsonl"):
            return insert_rows(
                Response._meta.db_table,
                ("project_id", "case_id", "external_id", "position", "model", "author_kind", "text"),
                rows,
            )


def _settings(data: dict) -> dict:
    """The settings project.json gives, each checked for its type by the one settings check
    (``annotation.projects.settings_clean``: a string is never a boolean), and the annotator
    quality settings by theirs (``annotation.projects.quality_settings_clean``)."""
    settings = {}
    for name in SETTINGS:
        if name in data:
            try:
                settings |= settings_clean({name: data[name]})
            except ValueError as exc:
                raise v.FieldError(name, str(exc)) from exc
    for name in QUALITY_SETTINGS:
        if name in data:
            try:
                settings |= quality_settings_clean({name: data[name]})
            except ValidationError as exc:
                raise v.FieldError(name, f"{name}: {exc.message_dict[name][0]}") from exc
    if not settings["name"].strip():
        raise v.FieldError("name", "field 'name' must not be empty")
    return settings


def _differs(current, new) -> bool:
    try:
        return float(current) != float(new)
    except (TypeError, ValueError):
        return current != new
