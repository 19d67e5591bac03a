"""Writes about a project itself: its roles, its settings, and the audit trail both leave.

Every change is recorded in ``AuditEvent`` (who, when, before, after) in the same transaction.
Settings that weaken independence — making a blind project not blind, or showing reference
answers to annotators — are changed only when the caller asks for it explicitly
(``allow_unblinding``), and are then recorded like every other change.
"""
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from evalsite.codes import CONFLICT, NOT_FOUND

from .models import AuditEvent, Cohort, CohortMembership, Project, ProjectRole

ROLE_NONE = "none"
ROLE_CHOICES = (ProjectRole.MANAGER, ProjectRole.ADJUDICATOR, ProjectRole.VIEWER, ROLE_NONE)
# What project.json may set, with the one type each may have.
SETTINGS = {
    "name": str, "description": str, "blind": bool, "coverage_k": int, "overlap": int,
    "low_agreement_threshold": float, "show_reference_answer": bool, "hide_rater_names": bool, "guidelines": str,
    "traits": list, "stratum_groups": dict,
}
UNBLINDING = {"blind": False, "show_reference_answer": True}
# Annotator quality (hidden check items): the project fields, what each may hold, and how the page,
# the API and project.json name them in errors.
QUALITY_MAX_RATE = Project.CHECK_RATE_MAX  # at most half of a queue: checks must stay a minority of an annotator's work
QUALITY_MAX_COUNT = 10_000
QUALITY_SETTINGS = {
    "check_rate": (float, 0.0, QUALITY_MAX_RATE),
    "check_alert_threshold": (float, 0.0, 1.0),
    "check_min_items": (int, 1, QUALITY_MAX_COUNT),
    "check_window": (int, 1, QUALITY_MAX_COUNT),
    "check_feedback": (bool, None, None),
}
QUALITY_WORDS = {
    "check_rate": "check-item rate", "check_alert_threshold": "alert threshold", "check_min_items": "minimum check items",
    "check_window": "rolling window", "check_feedback": "annotator feedback",
}


def audit_record(*, project: Project | None, actor, action: str, target: str = "", before=None, after=None,
                 note: str = "") -> AuditEvent:
    """Append one audit event (the caller's transaction keeps it with the change it records)."""
    return AuditEvent.objects.create(project=project, actor=actor if getattr(actor, "pk", None) else None, action=action,
                                     target=target, before=before, after=after, note=note)


@transaction.atomic
def project_role_set(*, project: Project, username: str, role: str, by=None) -> ProjectRole | None:
    """Give ``username`` the ``role`` in ``project`` ("none" takes their role away). Returns the
    role, or None when there is none left. Raises ValidationError naming what is wrong."""
    if role not in ROLE_CHOICES:
        raise ValidationError({"role": f"role {role!r} is not one of {', '.join(ROLE_CHOICES)}"})
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError({"user": ValidationError(f"no user {username!r}", code=NOT_FOUND)})
    current = ProjectRole.objects.select_for_update().filter(project=project, user=user).first()
    before = current.role if current else None
    if role == ROLE_NONE:
        if current is not None:
            current.delete()
            audit_record(project=project, actor=by, action="role", target=username, before=before, after=None)
        return None
    if current is None:
        current = ProjectRole.objects.create(project=project, user=user, role=role)
    elif current.role != role:
        current.role = role
        current.save(update_fields=["role"])
    else:
        return current
    audit_record(project=project, actor=by, action="role", target=username, before=before, after=role)
    return current


@transaction.atomic
def cohort_member_add(*, cohort: Cohort, username: str, role: str = CohortMembership.ANNOTATOR, by=None) -> CohortMembership:
    """Make ``username`` an annotator or checker of ``cohort`` (audited). A user belongs to one
    cohort per project (the cohorts' independence depends on it): a member of another cohort is
    refused, naming it; the same membership again changes nothing."""
    if role not in dict(CohortMembership.ROLES):
        raise ValidationError({"role": f"role {role!r} is not one of {', '.join(dict(CohortMembership.ROLES))}"})
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError({"username": ValidationError(f"no user {username!r}", code=NOT_FOUND)})
    current = CohortMembership.objects.select_for_update().filter(project_id=cohort.project_id, user=user).first()
    if current is not None and current.cohort_id != cohort.pk:
        raise ValidationError({"username": ValidationError(
            f"{username} is already in cohort {current.cohort.name} of this project; a user belongs to one cohort per project",
            code=CONFLICT)})
    if current is not None and current.role == role:
        return current
    before = current.role if current else None
    if current is None:
        current = CohortMembership.objects.create(project_id=cohort.project_id, cohort=cohort, user=user, role=role)
    else:
        current.role = role
        current.save(update_fields=["role"])
    audit_record(project=cohort.project, actor=by, action="cohort_member", target=f"{cohort.name}: {username}",
                 before={"role": before} if before else None, after={"role": role})
    return current


def settings_clean(data: dict, *, prefix: str = "") -> dict:
    """The project settings present in ``data``, each checked for its type (a string is never a
    boolean, a boolean never a number); ValueError naming the field otherwise."""
    clean = {}
    for name, kind in SETTINGS.items():
        if name not in data:
            continue
        value = data[name]
        if name == "coverage_k" and value is None:
            clean[name] = None
            continue
        if kind is list:
            clean[name] = traits_clean(value, prefix=prefix)
            continue
        if kind is dict:
            clean[name] = stratum_groups_clean(value, prefix=prefix)
            continue
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 32767
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
        else:
            ok = isinstance(value, str) and len(value) <= (200 if name == "name" else 100_000)
        if not ok:
            wanted = {bool: "true or false", int: "a whole number from 0 to 32767", float: "a number from 0 to 1",
                      str: "a string"}[kind]
            raise ValueError(f"{prefix}{name}: must be {wanted}, not {value!r}")
        if name == "overlap" and value < 1:
            raise ValueError(f"{prefix}overlap: must be at least 1")
        clean[name] = float(value) if kind is float else value
    return clean


def quality_settings_clean(data: dict) -> dict:
    """The quality settings in ``data`` (only those present) as typed values, or ValidationError naming the field."""
    clean = {}
    for name, (kind, low, high) in QUALITY_SETTINGS.items():
        if name not in data:
            continue
        value, words = data[name], QUALITY_WORDS[name]
        if kind is bool:
            if not isinstance(value, bool):
                raise ValidationError({name: f"{words} must be true or false"})
            clean[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise ValidationError({name: f"{words} must be a number"})
        if kind is int and int(value) != value:
            raise ValidationError({name: f"{words} must be a whole number"})
        if not low <= value <= high:
            raise ValidationError({name: f"{words} must be from {low:g} to {high:g}"})
        clean[name] = kind(value)
    return clean


GROUPED_STRATA = ("task_themes", "specialties")
# Where a refused text of the stratum groups waits in the session until the project page shows it
# again (what a manager typed is never thrown away with the error).
STRATUM_GROUPS_DRAFT = "stratum-groups-draft"


def stratum_groups_clean(value, *, prefix: str = "") -> dict:
    """The groups of strata of the coverage heatmaps: ``{"task_themes": {FAMILY: [THEME, ...]},
    "specialties": {MACRO_CATEGORY: [SPECIALTY, ...]}}`` (either may be left out), each group a
    non-empty name with a list of distinct values, each value in one group of its stratum at most;
    ValueError naming what is wrong otherwise."""
    where = f"{prefix}stratum_groups"
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ValueError(f'{where}: must be an object such as {{"task_themes": {{"FAMILY": ["THEME", ...]}}}}, not {value!r}')
    unknown = sorted(set(value) - set(GROUPED_STRATA))
    if unknown:
        raise ValueError(f"{where}: {unknown[0]!r} cannot be grouped; use {' or '.join(GROUPED_STRATA)}")
    clean = {}
    for stratum in GROUPED_STRATA:
        if stratum not in value:
            continue
        groups = value[stratum]
        if not isinstance(groups, dict):
            raise ValueError(f'{where}.{stratum}: must be an object of group names and their values, such as '
                             f'{{"GROUP": ["VALUE", ...]}}, not {groups!r}')
        owner: dict[str, str] = {}
        clean[stratum] = {}
        for group, members in groups.items():
            if not str(group).strip():
                raise ValueError(f"{where}.{stratum}: a group needs a name")
            if not isinstance(members, list) or not members or not all(isinstance(m, str) and m.strip() for m in members):
                raise ValueError(f"{where}.{stratum}.{group}: must be a non-empty list of {stratum.replace('_', ' ')} "
                                 f"(strings), not {members!r}")
            for member in members:
                if member in owner:
                    raise ValueError(f"{where}.{stratum}: {member!r} is in both {owner[member]!r} and {group!r}; "
                                     "a value belongs to one group at most")
                owner[member] = group
            clean[stratum][str(group)] = list(dict.fromkeys(members))
    return clean


def traits_clean(value, *, prefix: str = "") -> list[dict]:
    """The evidence rules of a project's traits (RULERS, SPEC §3 "Trait score"):
    ``[{"trait": CRITERION_ID, "min_evidence": m, "gate": τ}]``, each field checked; ValueError
    naming the field otherwise. Whether each trait is an ordinal criterion with checklist items
    is checked where the criteria are known (``grading.metrics.traits``' callers)."""
    if not isinstance(value, list):
        raise ValueError(f"{prefix}traits: must be a list of {{\"trait\", \"min_evidence\", \"gate\"}} objects")
    clean, seen = [], set()
    for i, rule in enumerate(value):
        where = f"{prefix}traits[{i}]"
        if not isinstance(rule, dict) or set(rule) - {"trait", "min_evidence", "gate"} or "trait" not in rule:
            raise ValueError(f"{where}: must be an object with \"trait\" and optionally \"min_evidence\" and \"gate\"")
        trait, m, gate = rule["trait"], rule.get("min_evidence", 0), rule.get("gate")
        if not isinstance(trait, str) or not trait:
            raise ValueError(f"{where}.trait: must be a criterion id")
        if trait in seen:
            raise ValueError(f"{where}.trait: {trait!r} has two rules")
        if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= 32767:
            raise ValueError(f"{where}.min_evidence: must be a whole number from 0 to 32767, not {m!r}")
        if gate is not None and (not isinstance(gate, (int, float)) or isinstance(gate, bool)):
            raise ValueError(f"{where}.gate: must be a number (the score a trait without enough evidence stays below)")
        if m and gate is None:
            raise ValueError(f"{where}.gate: a trait with min_evidence needs a gate")
        seen.add(trait)
        clean.append({"trait": trait, "min_evidence": m, **({"gate": gate} if gate is not None else {})})
    return clean


@transaction.atomic
def project_settings_update(*, project: Project, settings: dict, by=None, allow_unblinding: bool = False,
                            source: str = "") -> dict:
    """Apply already-cleaned ``settings`` to ``project``; returns {field: [old, new]} of what changed.

    Unblinding changes (``blind`` to false, ``show_reference_answer`` to true) are refused unless
    ``allow_unblinding``; every change is recorded as an audit event."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    changed = {name: [getattr(project, name), value] for name, value in settings.items() if getattr(project, name) != value}
    unblinding = sorted(name for name, value in UNBLINDING.items() if name in changed and changed[name][1] == value)
    if unblinding and not allow_unblinding:
        raise ValidationError({unblinding[0]: f"changing {', '.join(unblinding)} would show annotators what they must not "
                                              "see; ask for it explicitly"})
    if changed:
        for name, (_, value) in changed.items():
            setattr(project, name, value)
        project.save(update_fields=list(changed))
        audit_record(project=project, actor=by, action="settings", target=project.slug,
                     before={k: v[0] for k, v in changed.items()}, after={k: v[1] for k, v in changed.items()},
                     note=source)
    return changed
