"""A project's audit trail (issue 15): who changed what and when, newest first, from the two
append-only tables that record it: ``AuditEvent`` (roles, settings, guidance, rubric versions,
judges, assignments, cohort members, quality control, imports, API tokens; and the versions of
the prompt templates its judges use, which belong to no project) and
``AdjudicationHistory`` (every change to a gold decision). Labels keep their own history
(``LabelHistory``), shown per item. Managers read it on the audit page and download it as CSV.
"""
import json

from django.db.models import CharField, F, Q, QuerySet, Value
from django.db.models.functions import Cast, Coalesce, Concat

from annotation.models import AuditEvent, Project

from .models import AdjudicationHistory, PromptTemplate

COLUMNS = ("when", "who", "action", "target", "before", "after", "note")


def audit_actions(*, project: Project) -> list[str]:
    """The actions the project's trail holds, for the filter."""
    actions = set(AuditEvent.objects.filter(project=project).values_list("action", flat=True).distinct())
    templates = PromptTemplate.objects.filter(judges__project=project).values_list("name", flat=True)
    if AuditEvent.objects.filter(project__isnull=True, action="prompt_template", target__in=templates).exists():
        actions.add("prompt_template")
    if AdjudicationHistory.objects.filter(project=project).exists():
        actions |= set(AdjudicationHistory.objects.filter(project=project).values_list("action", flat=True).distinct())
    return sorted(actions)


def audit_trail(*, project: Project, action: str = "", who: str = "") -> QuerySet:
    """One queryset (a UNION of the two tables) of dicts with ``COLUMNS``, newest first. ``action``
    and ``who`` (a user name) filter; ``before``/``after`` are JSON text."""
    templates = PromptTemplate.objects.filter(judges__project=project).values_list("name", flat=True)
    events = AuditEvent.objects.filter(  # the project's, and the versions of the templates its judges use
        Q(project=project) | Q(project__isnull=True, action="prompt_template", target__in=templates)).order_by()
    changes = AdjudicationHistory.objects.filter(project=project).order_by()
    if action:
        events, changes = events.filter(action=action), changes.filter(action=action)
    if who:
        events, changes = events.filter(actor__username=who), changes.filter(changed_by__username=who)
    text = CharField()
    events = events.annotate(
        when=F("created_at"), who=Coalesce("actor__username", Value(""), output_field=text),
        before_text=Cast("before", text), after_text=Cast("after", text),
    ).values_list("when", "who", "action", "target", "before_text", "after_text", "note")
    changes = changes.annotate(
        when=F("changed_at"), who=Coalesce("changed_by__username", Value(""), output_field=text),
        target=Concat(Value("response "), "adjudication__response__external_id", Value(" / criterion "),
                      "adjudication__criterion__external_id", output_field=text),
        before_text=Cast("old", text), after_text=Cast("new", text), note=Value("", output_field=text),
    ).values_list("when", "who", "action", "target", "before_text", "after_text", "note")
    return events.union(changes, all=True).order_by("-when")


def audit_row(row: tuple) -> dict:
    """A trail row as a dict, ``before``/``after`` parsed back from JSON text."""
    record = dict(zip(COLUMNS, row))
    for key in ("before", "after"):
        value = record[key]
        record[key] = json.loads(value) if value not in (None, "", "null") else None
    return record
