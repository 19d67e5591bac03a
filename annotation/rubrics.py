"""Rubric versions: canonical JSON of a rubric, its sha256, and freezing a rubric into a version.

The canonical form of a criterion (``specs.criterion_canonical``) keeps only what changes its
meaning (id, text, kind, weight, options, tags, minimum evidence), with keys sorted and no
insignificant whitespace, so the same rubric always hashes the same and any edit produces a
new version. ``rubrics_freeze`` is the one way criteria change: the importer and the
new-version form (admin) both call it, it checks every criterion with ``specs.criterion_clean``,
and the admin shows criteria read-only, so a stored hash always matches its criteria.
"""
import hashlib
import json
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from evalsite.fastinsert import insert_rows

from .models import AuditEvent, Case, Criterion, Project, RubricVersion
from .projects import audit_record
from .specs import FieldError, criterion_canonical, criterion_clean, criterion_guidance

CRITERION_FIELDS = ("criterion_id", "text", "kind", "weight", "options", "tags", "min_evidence")


class RubricChangeError(FieldError):
    """A new rubric that may not replace the current one; ``case`` is the scope's case
    external id (None for the project rubric)."""

    def __init__(self, field: str, message: str, *, case: str | None):
        super().__init__(field, message)
        self.case = case


def criterion_spec(criterion: Criterion) -> dict:
    """The bundle form of a stored criterion."""
    return criterion_canonical(
        {
            "criterion_id": criterion.external_id,
            "text": criterion.text,
            "kind": criterion.kind,
            "weight": criterion.weight,
            "options": criterion.options,
            "tags": criterion.tags,
            "min_evidence": criterion.min_evidence,
            "checklist_of": criterion.checklist_of,
        }
    )


def criterion_bundle_spec(criterion: Criterion) -> dict:
    """A stored criterion as a bundle writes it: its spec and, when it has them, its guidance and variants."""
    spec = criterion_spec(criterion)
    if criterion.guidance:
        spec["guidance"] = criterion.guidance
    if criterion.variants:
        spec["variants"] = criterion.variants
    return spec


def rubric_hash(specs: Iterable[dict]) -> str:
    """sha256 of the canonical JSON of a rubric (a list of criterion specs, in order)."""
    return canonical_hash([criterion_canonical(s) for s in specs])


def canonical_hash(canonical: list[dict]) -> str:
    """sha256 of a rubric already in canonical form (what ``RubricVersion.content`` holds)."""
    payload = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def rubric_specs_clean(specs: object) -> list[dict]:
    """A whole rubric checked: a non-empty list of valid criteria with distinct ids; raises
    ``specs.FieldError`` naming the criterion (``[i].field``)."""
    if not isinstance(specs, list) or not specs:
        raise FieldError("rubric", "a rubric is a non-empty list of criteria")
    canonical = [criterion_clean(spec, prefix=f"[{i}].") for i, spec in enumerate(specs)]
    seen: dict[str, int] = {}
    for i, spec in enumerate(canonical):
        if spec["criterion_id"] in seen:
            raise FieldError(f"[{i}].criterion_id", f"criterion_id {spec['criterion_id']!r} is listed twice "
                                                   f"(first as criterion {seen[spec['criterion_id']] + 1})")
        seen[spec["criterion_id"]] = i
    return canonical


def rubric_freeze(*, project: Project, case: Case | None, specs: list[dict], by=None) -> tuple[RubricVersion, bool]:
    """Make ``specs`` the current rubric of the project (case=None) or of one case.

    Returns the version and whether anything changed; see ``rubrics_freeze``.
    """
    [(version, changed)] = rubrics_freeze(project=project, scopes=[(case, specs)], by=by)
    return version, changed


@transaction.atomic
def rubrics_freeze(*, project: Project, scopes: list[tuple[Case | None, list[dict]]], by=None) -> list[tuple[RubricVersion, bool]]:
    """Freeze several rubrics of one project at once (one scope = the project rubric or a case's).

    The same content keeps the current version; new content creates a version (or revives an
    earlier one with that hash), updates the criteria in place and points them at it, while
    labels and judgments keep pointing at the version they were made against. A handful of
    queries whatever the number of scopes, so a 2,500-case import stays fast. Each changed
    rubric is an audit event ``rubric_version`` (by ``by``): the old and the new hash.
    """
    current = {v.case_id: v for v in RubricVersion.objects.filter(project=project, is_current=True)}
    results: list[tuple[RubricVersion, bool] | None] = []
    changed_scopes = []
    for case, specs in scopes:
        canonical = [criterion_clean(spec, prefix=f"[{i}].") for i, spec in enumerate(specs)]
        _checklists_check(canonical, case=case)
        digest = canonical_hash(canonical)
        version = current.get(case.pk if case else None)
        if version is not None and version.content_hash == digest:
            results.append((version, False))
        else:
            results.append(None)
            changed_scopes.append((len(results) - 1, case, canonical, digest))
    if not changed_scopes:
        case_rubric_versions_sync(project=project)  # cases added since the last freeze
        _guidance_apply(project=project, scopes=scopes)
        return results  # type: ignore[return-value]
    existing = {c.external_id: c for c in Criterion.objects.filter(project=project)}
    _refuse_retiring_used_criteria(changed_scopes=changed_scopes, current=current, existing=existing)

    case_ids = [case.pk if case else None for _, case, _, _ in changed_scopes]
    stale = RubricVersion.objects.filter(project=project, is_current=True)
    stale.filter(case_id__in=[c for c in case_ids if c is not None]).update(is_current=False)
    if None in case_ids:
        stale.filter(case__isnull=True).update(is_current=False)
    # Whole-project reads rather than ``__in`` lists: PostgreSQL gets those as arrays whose
    # client-side escaping costs more than reading every row of a fresh project.
    earlier = {(v.case_id, v.content_hash): v for v in RubricVersion.objects.filter(project=project)}
    new_versions, revived = [], []
    for index, case, canonical, digest in changed_scopes:
        version = earlier.get((case.pk if case else None, digest))
        if version is None:
            new_versions.append((case.pk if case else None, digest, canonical))
        else:  # going back to an earlier rubric reuses its version
            version.is_current = True
            revived.append(version.pk)
        results[index] = version
    if revived:
        RubricVersion.objects.filter(pk__in=revived).update(is_current=True)
    if new_versions:
        # COPY rather than bulk_create: PostgreSQL's bulk_create sends arrays whose client-side
        # escaping took half a second for 250 versions of 30 criteria.
        now = timezone.now()
        stamp = connection.ops.adapt_datetimefield_value(now)
        insert_rows(
            RubricVersion._meta.db_table, ("project_id", "case_id", "content_hash", "content", "is_current", "created_at"),
            [(project.pk, case_id, digest, json.dumps(canonical), True, stamp) for case_id, digest, canonical in new_versions],
        )
        pks = {
            (case_id, digest): pk
            for pk, case_id, digest in RubricVersion.objects.filter(project=project, is_current=True)
            .values_list("pk", "case_id", "content_hash")
        }
        for index, case, canonical, digest in changed_scopes:
            if results[index] is None:
                case_id = case.pk if case else None
                version = RubricVersion(pk=pks[(case_id, digest)], project=project, case=case, content_hash=digest,
                                        content=canonical, is_current=True, created_at=now)
                version._state.adding = False
                results[index] = version
    for index, *_ in changed_scopes:
        results[index] = (results[index], True)
    actor = by if getattr(by, "pk", None) else None
    AuditEvent.objects.bulk_create([
        AuditEvent(project=project, actor=actor, action="rubric_version",
                   target=case.external_id if case else "project rubric",
                   before={"hash": current[case.pk if case else None].content_hash} if (case.pk if case else None) in current else None,
                   after={"hash": digest, "version": results[index][0].pk, "criteria": len(canonical)})
        for index, case, canonical, digest in changed_scopes
    ], batch_size=2000)

    to_create, to_update = [], []
    for index, case, canonical, _ in changed_scopes:
        version = results[index][0]
        given = scopes[index][1]  # the specs as given: a new criterion's guidance and variants go in with it
        for position, spec in enumerate(canonical):
            criterion = existing.get(spec["criterion_id"])
            if criterion is None:
                guidance, variants = _given(given[position], "guidance", ""), _given(given[position], "variants", {})
                to_create.append((
                    project.pk, case.pk if case else None, version.pk, spec["criterion_id"], position, spec["text"],
                    spec["kind"], spec["weight"], json.dumps(spec["options"]), json.dumps(spec["tags"]),
                    spec["min_evidence"], spec.get("checklist_of", ""), json.dumps(variants), guidance,
                ))
                continue
            criterion.text, criterion.kind, criterion.weight = spec["text"], spec["kind"], spec["weight"]
            criterion.options, criterion.tags, criterion.min_evidence = spec["options"], spec["tags"], spec["min_evidence"]
            criterion.checklist_of = spec.get("checklist_of", "")
            criterion.position, criterion.rubric_version = position, version
            to_update.append(criterion)
    if to_create:  # without model instances: an import can bring 75,000 criteria
        insert_rows(
            Criterion._meta.db_table,
            ("project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
             "options", "tags", "min_evidence", "checklist_of", "variants", "guidance"),
            to_create,
        )
    if to_update:
        Criterion.objects.bulk_update(
            to_update,
            ["text", "kind", "weight", "options", "tags", "min_evidence", "checklist_of", "position", "rubric_version"],
            batch_size=2000,
        )
    case_rubric_versions_sync(project=project)
    _guidance_apply(project=project, scopes=scopes)
    return results  # type: ignore[return-value]


def _checklists_check(canonical: list[dict], *, case: Case | None) -> None:
    """Each checklist item names a trait of its own rubric: an ordinal criterion that is no
    checklist item itself (SPEC §3 "Trait score")."""
    by_id = {spec["criterion_id"]: spec for spec in canonical}
    for i, spec in enumerate(canonical):
        trait = spec.get("checklist_of")
        if not trait:
            continue
        target = by_id.get(trait)
        if target is None or target["kind"] != Criterion.ORDINAL or target.get("checklist_of"):
            raise RubricChangeError(
                f"[{i}].checklist_of", f"checklist item {spec['criterion_id']!r} names {trait!r}, which is not an ordinal "
                                       "criterion of the same rubric (the trait it scores)",
                case=case.external_id if case else None)


def _given(spec, field: str, default):
    """What a spec gives for ``field`` (guidance, variants), ``default`` when it gives nothing."""
    value = spec.get(field) if isinstance(spec, dict) else None
    return default if value is None else value


def _guidance_apply(*, project: Project, scopes) -> None:
    """The guidance and variants the specs give (``specs.criterion_guidance``,
    ``specs.criterion_variants``; a spec without the key leaves what is stored as it is) written
    to their criteria, outside the rubric versions. A criterion created by this freeze was written
    with them already: only existing criteria whose guidance or variants changed are updated
    (Django's bulk update, one CASE per row: 3,600 rows took 4.4 s of a 250-case import)."""
    wanted = {field: {spec["criterion_id"]: value for _, specs in scopes for spec in specs
                      if (value := _given(spec, field, None)) is not None}
              for field in ("guidance", "variants")}
    if not any(wanted.values()):
        return
    changed = []
    for pk, ext, guidance, variants in (Criterion.objects.filter(project=project).order_by()
                                        .values_list("pk", "external_id", "guidance", "variants")):
        new_guidance, new_variants = wanted["guidance"].get(ext, guidance), wanted["variants"].get(ext, variants)
        if (new_guidance, new_variants) != (guidance, variants):
            changed.append(Criterion(pk=pk, guidance=new_guidance, variants=new_variants))
    Criterion.objects.bulk_update(changed, ["guidance", "variants"], batch_size=2000)


def criterion_guidance_update(*, criterion: Criterion, guidance: str, by=None, source: str = "") -> bool:
    """A manager's new guidance for one criterion (checked like a bundle's, audited); returns
    whether it changed. The criterion's rubric version stays as it is."""
    text = criterion_guidance({"guidance": guidance}) or ""
    if text == criterion.guidance:
        return False
    with transaction.atomic():
        before = criterion.guidance
        criterion.guidance = text
        criterion.save(update_fields=["guidance"])
        audit_record(project=criterion.project, actor=by, action="guidance", target=criterion.external_id,
                     before={"guidance": before}, after={"guidance": text}, note=source)
    return True


def _refuse_retiring_used_criteria(*, changed_scopes, current: dict, existing: dict) -> None:
    """A criterion left out of its rubric's new version would orphan the labels and judgments made
    on it (they would count nowhere and could not be exported): refused, naming the criterion.
    A criterion nobody has decided yet may be left out; it stays with the version it belonged to."""
    retired = []
    for _, case, canonical, _ in changed_scopes:
        old = current.get(case.pk if case else None)
        if old is not None:
            kept = {spec["criterion_id"] for spec in canonical}
            retired += [(c, case) for c in existing.values() if c.rubric_version_id == old.pk and c.external_id not in kept]
    if not retired:
        return
    by_pk = {c.pk: case for c, case in retired}
    used = (
        Criterion.objects.filter(pk__in=list(by_pk)).filter(Q(labels__isnull=False) | Q(judgments__isnull=False))
        .order_by("external_id").values_list("pk", "external_id").distinct().first()
    )
    if used is not None:
        case = by_pk[used[0]]
        raise RubricChangeError(
            "criterion_id",
            f"criterion {used[1]!r} has labels or judgments: it cannot be left out of "
            f"{'case ' + repr(case.external_id) if case else 'the project'}'s rubric (change its text instead)",
            case=case.external_id if case else None,
        )


def case_rubric_versions_sync(*, project: Project) -> None:
    """Point every case of ``project`` at the rubric it is judged against: its own current
    version, else the project's current version (SPEC §2; two UPDATE statements)."""
    current = RubricVersion.objects.filter(project=project, is_current=True)
    own = current.filter(case_id=OuterRef("pk")).values("pk")[:1]
    Case.objects.filter(project=project).update(rubric_version_id=Subquery(own))
    shared = current.filter(case__isnull=True).values_list("pk", flat=True).first()
    if shared is not None:
        Case.objects.filter(project=project, rubric_version__isnull=True).update(rubric_version_id=shared)


@transaction.atomic
def rubric_version_new(*, version: RubricVersion, specs: object, by=None) -> tuple[RubricVersion, bool]:
    """A new version of the rubric ``version`` belongs to (the project's or one case's), from
    criteria in bundle form: what the new-version form calls. The criterion ids may not move
    between scopes (a criterion of another case or of the project rubric keeps its scope).
    Raises ``ValidationError`` naming the offending criterion and field."""
    try:
        canonical = rubric_specs_clean(specs)
    except FieldError as exc:
        raise ValidationError({"specs": f"{exc.field}: {exc.message}"}) from None
    owners = dict(Criterion.objects.filter(project_id=version.project_id).values_list("external_id", "case_id"))
    for i, spec in enumerate(canonical):
        owner = owners.get(spec["criterion_id"], version.case_id)
        if owner != version.case_id:
            where = "the project rubric" if owner is None else "another case's rubric"
            raise ValidationError({"specs": f"[{i}].criterion_id: {spec['criterion_id']!r} already belongs to {where}"})
    try:
        return rubric_freeze(project=version.project, case=version.case, specs=canonical, by=by)
    except RubricChangeError as exc:
        raise ValidationError({"specs": exc.message}) from None
