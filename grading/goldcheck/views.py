"""The annotator-quality page of a project (managers only, ``annotation.access``): the settings form,
the seeding form and a row per annotator with the alert; and an annotator's own feedback page (their
agreement with reference answers, when the project allows it). Each form is a plain POST that calls
one service and redirects back with a message, as the quality-control page does."""
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.access import project_get_for
from annotation.models import Cohort, Project
from evalsite.refusals import form_problems, refusal_text

from ..reports.charts import rolling_chart
from .rules import MAX_COUNT, MAX_RATE
from .selectors import annotator_feedback, annotator_quality, check_counts, gold_response_ids
from .services import checks_seed, quality_settings_update


class SettingsForm(forms.Form):
    check_rate = forms.FloatField(min_value=0, max_value=MAX_RATE)
    check_alert_threshold = forms.FloatField(min_value=0, max_value=1)
    check_min_items = forms.IntegerField(min_value=1, max_value=MAX_COUNT)
    check_window = forms.IntegerField(min_value=1, max_value=MAX_COUNT)
    check_feedback = forms.BooleanField(required=False)


class SeedForm(forms.Form):
    seed = forms.IntegerField(min_value=-(2**31), max_value=2**31 - 1)
    cohort = forms.IntegerField(required=False, min_value=1, max_value=2**31 - 1)



def quality_charts(*, project: Project, rows) -> dict:
    """The drift chart of every annotator with check items, and a sparkline per row."""
    threshold = ("alert threshold", project.check_alert_threshold)
    drawn = [r for r in rows if r.gold.n_items]
    drift = None
    if drawn:
        drift = rolling_chart(title=f"Agreement with gold over the last {project.check_window} check items, after each one",
                           series=[(r.username, r.gold.drift) for r in drawn], x_title="check item (submission order)",
                           value_title="agreement with gold", reference=threshold)
    sparks = {r.user_id: rolling_chart(title=f"{r.username}: rolling agreement with gold", series=[(r.username, r.gold.drift)],
                                    reference=threshold, width=120, height=28, compact=True)
              for r in drawn}
    return {"drift": drift, "sparks": sparks}


@login_required
def quality_page(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    rows = annotator_quality(project=project)
    charts = quality_charts(project=project, rows=rows)
    for row in rows:
        row.spark = charts["sparks"].get(row.user_id)
    return render(request, "grading/goldcheck/page.html", {
        "project": project, "rows": rows, "drift": charts["drift"], "counts": check_counts(project=project),
        "eligible": len(gold_response_ids(project=project)), "cohorts": list(project.cohorts.all()),
        "alerts": sum(1 for r in rows if r.alert), "max_rate": MAX_RATE,
    })


@login_required
@require_POST
def quality_settings_submit(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = SettingsForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Settings not saved: {form_problems(form)}")
        return redirect("quality-annotators", slug=slug)
    try:
        changed = quality_settings_update(project=project, data=form.cleaned_data, by=request.user)
    except ValidationError as exc:
        messages.error(request, f"Settings not saved: {refusal_text(exc)}")
    else:
        messages.success(request, f"Settings saved ({len(changed)} changed)." if changed else "Nothing changed.")
    return redirect("quality-annotators", slug=slug)


@login_required
@require_POST
def quality_seed_submit(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = SeedForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No check items seeded: {form_problems(form)}")
        return redirect("quality-annotators", slug=slug)
    cohort = None
    if form.cleaned_data.get("cohort"):
        cohort = get_object_or_404(Cohort, project=project, pk=form.cleaned_data["cohort"])
    try:
        result = checks_seed(project=project, by=request.user, seed=form.cleaned_data["seed"], cohort=cohort)
    except ValidationError as exc:
        messages.error(request, f"No check items seeded: {refusal_text(exc)}")
    else:
        messages.success(request, f"{result['created']} check items seeded ({result['eligible']} responses with gold "
                                  "decisions to draw from)." if result["created"] else
                         "Every queue already holds its share of check items (or no gold response is left to draw).")
    return redirect("quality-annotators", slug=slug)


@login_required
def feedback_page(request, slug: str):
    """An annotator's own agreement with reference answers (404 for a non-annotator, 403 when off)."""
    project = get_object_or_404(Project, slug=slug)
    return render(request, "grading/goldcheck/feedback.html", {
        "project": project, "feedback": annotator_feedback(project=project, user=request.user),
    })
