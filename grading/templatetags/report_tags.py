"""Template tags of the reports: the report links section of the project page
(``project_reports``), the project list of the admin index (``report_projects``) and the
number format of report tables (``fmt``)."""
from django import template
from django.db.models import Count, F
from django.urls import reverse
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import mark_safe
from rest_framework import serializers

from annotation.access import projects_for, user_may
from annotation.models import Criterion
from grading.reports.glossary import term_for
from grading.reports.registry import SourceField, page_title, pages
from grading.selectors import project_model_names
from grading.sources import project_sources

register = template.Library()


@register.simple_tag
def report_links(project):
    """Links to every report page of ``project`` (the registry's report menu), separated by dots."""
    index = reverse("report-index", args=[project.slug])
    return format_html_join(" · ", '<a href="{}">{}</a>', ((f"{index}{key}/", page_title(report)) for key, report in pages()))


@register.simple_tag
def project_reports(project):
    return format_html('<h2>Reports</h2><p class="report-links">{}</p>', report_links(project))


@register.simple_tag(takes_context=True)
def report_projects(context):
    """The projects whose reports the requesting user may read."""
    request = context.get("request")
    if request is None:
        return []
    return list(projects_for(user=request.user, action="view").order_by("slug").only("slug", "name"))


@register.filter
def fmt(value, digits: int = 3):
    """Floats with ``digits`` decimals, None as an en dash, anything else as it is."""
    if value is None:
        return "–"
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != 0 and abs(value) < 10 ** -int(digits):
            return f"{value:.1e}"  # p-values and tiny differences: not a misleading 0.000
        return f"{value:.{int(digits)}f}"
    return value


@register.filter
def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


# A page shows at most this many rows of a table (a per-criterion table of the full-scale study has
# 825,000): enough to read and scroll, small enough to render in well under a second; its CSV has all.
TABLE_ROWS_SHOWN = 1000


@register.simple_tag
def table_rows(table, limit=None):
    """The ``<tr>`` rows of a report table, built in one pass rather than through the template
    loop (a per-criterion table of the bench project has 7,500 rows of 21 cells): each cell
    escaped and formatted by ``fmt``, numbers right-aligned; the first ``limit`` rows (default
    ``TABLE_ROWS_SHOWN``; the CSV holds them all)."""
    columns = len(table["columns"])
    if not table["rows"]:
        return format_html('<tr><td colspan="{}" class="muted">No rows.</td></tr>', columns)
    out = []
    for row in table["rows"][:TABLE_ROWS_SHOWN if limit is None else limit]:
        cells = "".join(f'<td class="num">{conditional_escape(fmt(v))}</td>' if is_number(v)
                        else f"<td>{conditional_escape(fmt(v))}</td>" for v in row)
        out.append(f"<tr>{cells}</tr>")
    return mark_safe("".join(out))  # every value escaped above


@register.simple_tag
def table_rows_shown() -> int:
    return TABLE_ROWS_SHOWN


@register.simple_tag
def column_head(column):
    """A table header: the column's words, with its definition as the tooltip and a link to the
    help page's entry; a column named after data (a model, a source) as it is."""
    term = term_for(str(column))
    if term is None:
        return column
    return format_html('<abbr class="term" title="{}" data-column="{}">{}</abbr>', term.definition, column, term.words)


@register.simple_tag(takes_context=True)
def user_may_do(context, project, action: str) -> bool:
    """Whether the page's user may take ``action`` in ``project`` (``annotation.access``): a form of a
    page shows only for the roles its service lets through."""
    return user_may(project=project, user=context["request"].user, action=action)


@register.filter
def get_item(mapping, key):
    return (mapping or {}).get(key)


def _once(project, name: str, read):
    """``read()`` once per project object (a page's choosers share one read)."""
    cache = project.__dict__.setdefault("_chooser_lists", {})
    if name not in cache:
        cache[name] = read()
    return cache[name]


@register.simple_tag
def source_options(project, selected="", fallback="", blank=None, kinds=("cohort", "judge", "gold")):
    """The ``<option>``s of every source of ``project`` (cohorts, judges, gold; ``kinds``: only
    those), grouped, with ``selected`` (or, when it is empty, ``fallback``) chosen; ``blank``: the
    words of an empty first choice. Built from the project, so the list is full when the page
    opens, before any figure is computed."""
    groups = _once(project, "sources", lambda: project_sources(project=project))
    selected = str(selected or fallback or "")
    parts = [format_html('<option value=""{}>{}</option>', " selected" if not selected else "", blank)] if blank else []
    for label, key, kind in (("Cohorts", "cohorts", "cohort"), ("Judges", "judges", "judge"), ("Gold", "gold", "gold")):
        if groups[key] and kind in kinds:
            options = format_html_join("", '<option value="{}"{}>{}</option>', (
                (s.spec, " selected" if s.spec == selected else "", s.spec) for s in groups[key]))
            parts.append(format_html('<optgroup label="{}">{}</optgroup>', label, options))
    known = {s.spec for sources in groups.values() for s in sources}
    if selected and selected != "none" and selected not in known:  # a source of another project, named in the URL
        parts.append(format_html('<option value="{}" selected>{}</option>', selected, selected))
    return mark_safe("".join(str(p) for p in parts))  # every part built by format_html


@register.simple_tag
def sources_count(project, *kinds: str) -> int:
    """How many sources of these kinds (cohort, judge, gold) ``project`` has: a form whose menu would
    list none of them is left out, and the page says why."""
    groups = _once(project, "sources", lambda: project_sources(project=project))
    return sum(len(groups[key]) for key, kind in (("cohorts", "cohort"), ("judges", "judge"), ("gold", "gold"))
               if kind in kinds)


def _most_binary_criteria(project) -> int:
    """The most binary criteria any case of ``project`` is graded on (its project-wide ones and its
    own), the largest threshold k that can mean anything (one query)."""
    per_case = dict(Criterion.objects.filter(project=project, kind=Criterion.BINARY).order_by()
                    .values_list("case_id").annotate(n=Count("id")).values_list("case_id", "n"))
    shared = per_case.pop(None, 0)
    return shared + max(per_case.values(), default=0)


@register.simple_tag
def most_binary_criteria(project) -> int:
    """The largest threshold k of ``project`` (0: no binary criteria, so no k to choose)."""
    return _once(project, "most_binary", lambda: _most_binary_criteria(project))


@register.simple_tag(takes_context=True)
def threshold_options(context, project, name, blank=None, default=None):
    """The ``<option>``s of the thresholds k a coverage figure can take in ``project`` (1 to the
    most binary criteria of a case), the query's choice of ``name`` selected (several for a
    multiple select: ``7,8`` or repeated), ``default`` marked; ``blank``: words of an empty choice."""
    request = context.get("request")
    chosen = set()
    if request is not None:
        chosen = {part.strip() for value in request.GET.getlist(name) for part in value.split(",") if part.strip()}
    top = _once(project, "most_binary", lambda: _most_binary_criteria(project))
    parts = [format_html('<option value=""{}>{}</option>', "" if chosen else " selected", blank)] if blank else []
    values = sorted({*range(1, top + 1), *(int(c) for c in chosen if c.isdigit())})
    marked = str(default) if default is not None else None
    parts += [format_html('<option value="{}"{}>{}{}</option>', k, " selected" if str(k) in chosen else "", k,
                          " (the project's k)" if str(k) == marked else "") for k in values]
    return mark_safe("".join(str(p) for p in parts))  # every part built by format_html


@register.simple_tag(takes_context=True)
def param_field(context, project, name, field):
    """A report parameter's control, chosen from what the project holds where the field says what
    it takes: a source menu, a menu of choices, a box for a switch, a number box with its bounds;
    the query's value kept, so a shared URL shows the same choice."""
    request = context.get("request")
    value = request.GET.get(name, "") if request is not None else ""
    label = str(field.label or name.replace("_", " ").capitalize())
    hint = str(field.help_text or "")
    if isinstance(field, SourceField):
        options = source_options(project, value, blank="(default)" if not field.required else None, kinds=field.kinds)
        control = format_html('<select name="{}" title="{}">{}</select>', name, hint, options)
    elif isinstance(field, serializers.ChoiceField):
        options = format_html_join("", '<option value="{}"{}>{}</option>', (
            (key, " selected" if str(key) == value or (not value and key == field.default) else "", text)
            for key, text in field.choices.items()))
        control = format_html('<select name="{}" title="{}">{}</select>', name, hint, options)
    elif isinstance(field, serializers.BooleanField):
        checked = " checked" if value.lower() in {"1", "true", "yes", "on"} else ""
        return format_html('<label title="{}"><input type="checkbox" name="{}" value="1"{}> {}</label>', hint, name, checked, label)
    elif isinstance(field, (serializers.IntegerField, serializers.FloatField)):
        bounds = format_html_join(" ", '{}="{}"', ((attr, bound) for attr, bound in (
            ("min", field.min_value), ("max", field.max_value)) if bound is not None))
        step = "1" if isinstance(field, serializers.IntegerField) else "any"
        control = format_html('<input type="number" name="{}" value="{}" step="{}" {} title="{}">', name, value, step, bounds, hint)
    else:
        control = format_html('<input type="text" name="{}" value="{}" size="16" title="{}">', name, value, hint)
    return format_html("<label>{} {}</label>", label, control)


CRITERION_MENU_LIMIT = 500  # more than this and the menu lists the criteria every case shares only


def _criterion_menu(project) -> list[tuple[str, str]]:
    """(id, text) of the project's criteria, shared ones first, in one query; only the shared ones
    when there are more than ``CRITERION_MENU_LIMIT``."""
    rows = list(Criterion.objects.filter(project=project)
                .order_by(F("case_id").asc(nulls_first=True), "position", "external_id")
                .values_list("case_id", "external_id", "text")[:CRITERION_MENU_LIMIT + 1])
    if len(rows) > CRITERION_MENU_LIMIT:
        rows = [row for row in rows if row[0] is None]
    seen, menu = set(), []
    for _, external_id, text in rows:
        if external_id not in seen:
            seen.add(external_id)
            menu.append((external_id, text))
    return menu


@register.simple_tag
def criterion_options(project, first=None):
    """The ``<option>``s of a criterion search box's list: each criterion's id with its text as the
    label (typing either finds it); ``first``: a value listed before them (``all``). On a project
    with more case-specific criteria than ``CRITERION_MENU_LIMIT`` only the shared ones are listed."""
    menu = _once(project, "criteria", lambda: _criterion_menu(project))
    head = format_html('<option value="{}" label="every criterion of one scale, pooled"></option>', first) if first else ""
    return head + format_html_join("", '<option value="{}" label="{}"></option>',
                                   ((cid, f"{cid}: {text[:120]}") for cid, text in menu))


@register.simple_tag(takes_context=True)
def model_options(context, project, name):
    """The ``<option>``s of the project's models for the multiple select ``name`` (the query's
    chosen ones selected)."""
    request = context.get("request")
    chosen = set()
    if request is not None:
        chosen = {m.strip() for value in request.GET.getlist(name) for m in value.split(",") if m.strip()}
    return format_html_join("", '<option value="{}"{}>{}</option>', (
        (m, " selected" if m in chosen else "", m) for m in _once(project, "models", lambda: project_model_names(project=project))))
