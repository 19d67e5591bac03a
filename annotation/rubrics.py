"""Rubric versions: canonical JSON of a rubric, its sha256, and freezing a rubric into a version.

The canonical form of a criterion keeps only what changes its meaning (id, text, kind,
weight, options, tags, minimum evidence), with keys sorted and no insignificant whitespace,
so the same rubric always hashes the same and any edit produces a new version.
"""
import hashlib
from collections.abc import Iterable

import json

from django.db import connection, transaction
from django.utils import timezone

from evalsite.fastinsert import insert_rows

from .models import Case, Criterion, Project, RubricVersion

CRITERION_FIELDS = ("criterion_id", "text", "kind", "weight", "options", "tags", "min_evidence")


def criterion_canonical(spec: dict) -> dict:
    """The canonical dict of one criterion spec (bundle form)."""
    return {
        "criterion_id": spec["criterion_id"],
        "text": spec["text"],
        "kind": spec.get("kind", Criterion.BINARY),
        "weight": float(spec.get("weight", 1.0)),
        "options": [
            {"label": o["label"], "value": float(o["value"]), "na": bool(o.get("na", False))}
            for o in spec.get("options") or []
        ],
        "tags": list(spec.get("tags") or []),
        "min_evidence": int(spec.get("min_evidence", 0)),
    }


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
        }
    )


def rubric_hash(specs: Iterable[dict]) -> str:
    """sha256 of the canonical JSON of a rubric (a list of criterion specs, in order)."""
    return _canonical_hash([criterion_canonical(s) for s in specs])


def _canonical_hash(canonical: list[dict]) -> str:
    payload = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def rubric_freeze(*, project: Project, case: Case | None, specs: list[dict]) -> tuple[RubricVersion, bool]:
    """Make ``specs`` the current rubric of the project (case=None) or of one case.

    Returns the version and whether anything changed; see ``rubrics_freeze``.
    """
    [(version, changed)] = rubrics_freeze(project=project, scopes=[(case, specs)])
    return version, changed


@transaction.atomic
def rubrics_freeze(*, project: Project, scopes: list[tuple[Case | None, list[dict]]]) -> list[tuple[RubricVersion, bool]]:
    """Freeze several rubrics of one project at once (one scope = the project rubric or a case's).

    The same content keeps the current version; new content creates a version (or revives an
    earlier one with that hash), updates the criteria in place and points them at it, while
    labels and judgments keep pointing at the version they were made against. A handful of
    queries whatever the number of scopes, so a 2,500-case import stays fast.
    """
    current = {v.case_id: v for v in RubricVersion.objects.filter(project=project, is_current=True)}
    results: list[tuple[RubricVersion, bool] | None] = []
    changed_scopes = []
    for case, specs in scopes:
        canonical = [criterion_canonical(s) for s in specs]
        digest = _canonical_hash(canonical)
        version = current.get(case.pk if case else None)
        if version is not None and version.content_hash == digest:
            results.append((version, False))
        else:
            results.append(None)
            changed_scopes.append((len(results) - 1, case, canonical, digest))
    if not changed_scopes:
        return results  # type: ignore[return-value]

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

    existing = {c.external_id: c for c in Criterion.objects.filter(project=project)}
    to_create, to_update = [], []
    for index, case, canonical, _ in changed_scopes:
        version = results[index][0]
        for position, spec in enumerate(canonical):
            criterion = existing.get(spec["criterion_id"])
            if criterion is None:
                to_create.append((
                    project.pk, case.pk if case else None, version.pk, spec["criterion_id"], position, spec["text"],
                    spec["kind"], spec["weight"], json.dumps(spec["options"]), json.dumps(spec["tags"]),
                    spec["min_evidence"],
                ))
                continue
            criterion.text, criterion.kind, criterion.weight = spec["text"], spec["kind"], spec["weight"]
            criterion.options, criterion.tags, criterion.min_evidence = spec["options"], spec["tags"], spec["min_evidence"]
            criterion.position, criterion.rubric_version = position, version
            to_update.append(criterion)
    if to_create:  # without model instances: an import can bring 75,000 criteria
        insert_rows(
            Criterion._meta.db_table,
            ("project_id", "case_id", "rubric_version_id", "external_id", "position", "text", "kind", "weight",
             "options", "tags", "min_evidence"),
            to_create,
        )
    if to_update:
        Criterion.objects.bulk_update(
            to_update,
            ["text", "kind", "weight", "options", "tags", "min_evidence", "position", "rubric_version"],
            batch_size=2000,
        )
    return results  # type: ignore[return-value]
