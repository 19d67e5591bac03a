"""The steps of a bundle import that rebuild who works on a project and which cases quality control
kept (issue 24 point 5): project.json's ``roles`` (manager, adjudicator, viewer by user name) and
each cohort's ``members`` (annotators and checkers), and ``quality.jsonl`` (each case's screening,
audit and exclusion). Users named and not yet known are created without a password (they cannot
log in until an administrator gives them one): a bundle never carries a secret.

A role or membership is added where the user has none in the project; one that differs from the
project's is left as it is and reported with the settings left alone, unless the import applies
the bundle's settings (``--update-settings``), which changes it through the audited services.
Mixed into the importer."""
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.models import CaseQuality, CohortMembership, ProjectRole
from annotation.projects import cohort_member_add, project_role_set

from . import validate as v

PROJECT_ROLES = tuple(role for role, _ in ProjectRole.ROLES)
MEMBER_ROLES = tuple(role for role, _ in CohortMembership.ROLES)
QUALITY_OUTCOMES = ("", *(outcome for outcome, _ in CaseQuality.OUTCOMES))
QUALITY_FIELDS = ("case_id", "excluded", "flagged", "screen_accuracy_pct", "screen_threshold_pct", "screen_source",
                  "screen_models", "audit_sampled", "audit_outcome", "audit_note", "audit_by", "audit_at")
USERNAME_LENGTH = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).max_length


def people_clean(data: dict) -> tuple[list[tuple[str, str]], dict[str, list[tuple[str, str]]]]:
    """project.json's ``roles`` and the cohorts' ``members``, checked: ([(user, role)], {cohort: [(user, role)]}).
    A user has one role and is in one cohort (FieldError naming the entry otherwise)."""
    roles, seen = [], set()
    for i, entry in enumerate(data.get("roles") or []):
        prefix = f"roles[{i}]."
        if not isinstance(entry, dict):
            raise v.FieldError(f"roles[{i}]", "a role must be a JSON object")
        v.check_keys(entry, required=("user", "role"), optional=(), prefix=prefix)
        user = v.string(entry, "user", prefix=prefix, max_length=USERNAME_LENGTH)
        role = v.choice(entry, "role", PROJECT_ROLES, prefix=prefix)
        if user in seen:
            raise v.FieldError(prefix + "user", f"{user!r} has a second role; a user has one role in a project")
        seen.add(user)
        roles.append((user, role))
    members, seen = {}, set()
    for i, cohort in enumerate(data.get("cohorts") or []):
        entries = cohort.get("members") or []
        if not isinstance(entries, list):
            raise v.FieldError(f"cohorts[{i}].members", "field 'members' must be a list")
        for j, entry in enumerate(entries):
            prefix = f"cohorts[{i}].members[{j}]."
            if not isinstance(entry, dict):
                raise v.FieldError(prefix.rstrip("."), "a member must be a JSON object")
            v.check_keys(entry, required=("user",), optional=("role",), prefix=prefix)
            user = v.string(entry, "user", prefix=prefix, max_length=USERNAME_LENGTH)
            role = v.choice(entry, "role", MEMBER_ROLES, prefix=prefix, default=CohortMembership.ANNOTATOR)
            if user in seen:
                raise v.FieldError(prefix + "user", f"{user!r} is in a second cohort; a user belongs to one cohort per project")
            seen.add(user)
            members.setdefault(cohort["name"], []).append((user, role))
    return roles, members


class PeopleStep:
    def _users(self, names) -> None:
        """Create the users ``names`` holds that do not exist yet (no password)."""
        User = get_user_model()
        known = set(User.objects.filter(**{f"{User.USERNAME_FIELD}__in": list(names)}).values_list(User.USERNAME_FIELD, flat=True))
        for name in sorted(set(names) - known):
            User.objects.create_user(**{User.USERNAME_FIELD: name})

    def _people(self, roles: list[tuple[str, str]], members: dict[str, list[tuple[str, str]]]) -> None:
        """Add the bundle's roles and cohort memberships; report or (``update_settings``) apply differing ones."""
        self._users([user for user, _ in roles] + [user for pairs in members.values() for user, _ in pairs])
        current_roles = dict(ProjectRole.objects.filter(project=self.project).values_list("user__username", "role"))
        current_members = {user: (cohort, role) for user, cohort, role in CohortMembership.objects.filter(
            project=self.project).values_list("user__username", "cohort__name", "role")}
        source = self.reader.path.name
        try:
            for user, role in roles:
                if current_roles.get(user) == role:
                    continue
                if user in current_roles and not self.update_settings:
                    self.settings_ignored[f"role:{user}"] = [current_roles[user], role]
                    continue
                project_role_set(project=self.project, username=user, role=role, by=self.user)
                self.project_written = True
            for cohort_name, pairs in members.items():
                cohort = self.cohorts[cohort_name]
                for user, role in pairs:
                    if current_members.get(user) == (cohort_name, role):
                        continue
                    if user in current_members and not self.update_settings:
                        self.settings_ignored[f"member:{user}"] = [list(current_members[user]), [cohort_name, role]]
                        continue
                    cohort_member_add(cohort=cohort, username=user, role=role, by=self.user)
                    self.project_written = True
        except ValidationError as exc:
            messages = [m for ms in exc.message_dict.values() for m in ms] if hasattr(exc, "message_dict") else exc.messages
            raise v.FieldError("cohorts", f"{'; '.join(messages)} (importing {source})") from exc

    def _quality(self) -> int:
        """quality.jsonl into the project's quality-control records; returns how many changed."""
        User = get_user_model()
        cases = dict(self.project.cases.values_list("external_id", "pk"))
        existing = {row.case_id: row for row in CaseQuality.objects.filter(project=self.project)}
        changed = 0
        for number, obj in self.reader.iter_jsonl("quality.jsonl"):
            try:
                values = self._quality_line(obj, cases)
            except v.FieldError as exc:
                self._fail(exc, "quality.jsonl", number)
            case_pk = values.pop("case_id")
            audit_by = values.pop("audit_by")
            if audit_by:
                self._users([audit_by])
                values["audit_by_id"] = User.objects.get(**{User.USERNAME_FIELD: audit_by}).pk
            else:
                values["audit_by_id"] = None
            row = existing.get(case_pk)
            if row is None:
                CaseQuality.objects.create(project=self.project, case_id=case_pk, **values)
                changed += 1
            elif any(getattr(row, name) != value for name, value in values.items()):
                for name, value in values.items():
                    setattr(row, name, value)
                row.save()
                changed += 1
        return changed

    def _quality_line(self, obj: dict, cases: dict) -> dict:
        v.check_keys(obj, required=("case_id",), optional=QUALITY_FIELDS)
        case_id = v.string(obj, "case_id")
        if case_id not in cases:
            raise v.FieldError("case_id", f"unknown case {case_id!r}")
        values = {"case_id": cases[case_id]}
        for name in ("excluded", "flagged", "audit_sampled"):
            value = obj.get(name, False)
            if not isinstance(value, bool):
                raise v.FieldError(name, f"field {name!r} must be true or false")
            values[name] = value
        for name in ("screen_accuracy_pct", "screen_threshold_pct"):
            values[name] = v.number(obj, name)
        values["screen_source"] = v.string(obj, "screen_source", required=False, blank=True,
                                           max_length=CaseQuality._meta.get_field("screen_source").max_length)
        values["screen_models"] = v.string_list(obj, "screen_models")
        outcome = obj.get("audit_outcome") or ""
        values["audit_outcome"] = v.choice({"audit_outcome": outcome}, "audit_outcome", QUALITY_OUTCOMES)
        values["audit_note"] = v.string(obj, "audit_note", required=False, blank=True)
        values["audit_by"] = v.string(obj, "audit_by", required=False, max_length=USERNAME_LENGTH) or None
        when = obj.get("audit_at")
        if when is None:
            values["audit_at"] = None
        else:
            try:
                values["audit_at"] = datetime.fromisoformat(v.string(obj, "audit_at"))
            except ValueError:
                raise v.FieldError("audit_at", f"field 'audit_at' {when!r} is not an ISO 8601 date and time") from None
            if values["audit_at"].tzinfo is None:
                raise v.FieldError("audit_at", "field 'audit_at' needs its time zone (e.g. +00:00)")
        return values
