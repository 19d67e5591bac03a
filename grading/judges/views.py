"""HTML views of the judges (researchers only): the judge section of the project page (runs with
a live progress bar, start / stop / resume), the runs page (every run, a page at a time), the
judges page (configure judges, panels and cross-evaluations) and the side-by-side page of one
response.

htmx targets, one partial each: ``#judge-runs`` (polled while a run is active), ``#judge-run-form``,
``#run-list`` (the runs page's pager).
Every action also works as a plain form post followed by a redirect.
"""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import retarget

from annotation.access import project_get_for
from annotation.models import Project, Response
from annotation.templatetags.pager_tags import htmx_partial

from ..models import JudgeRun
from . import selectors, services
from .forms import CrossEvaluationForm, JudgeForm, PanelForm, RunResumeForm, RunStartForm

SECTION = "grading/judges/section.html"


def section_context(*, project, run_form=None) -> dict:
    return {**selectors.judge_section_data(project=project), "run_form": run_form or RunStartForm(project=project)}


def _project(request, slug: str, action: str = "manage") -> Project:
    """The project, for a user whose role allows ``action`` (managers run and configure judges)."""
    return project_get_for(user=request.user, action=action, slug=slug)


def _runs_response(request, project, run=None):
    if run is not None and request.POST.get("back") == "run":  # from the run's own page: back to it
        return redirect("judge-run-page", slug=project.slug, run_id=run.pk)
    if request.htmx:
        return render(request, f"{SECTION}#judge-runs", section_context(project=project))
    return redirect(reverse("project-detail", args=[project.slug]) + "#project-judges")


@login_required
def judge_runs(request, slug: str):
    """The runs table alone: what the progress bar polls."""
    project = _project(request, slug)
    return render(request, f"{SECTION}#judge-runs", section_context(project=project))


RUNS_PAGE = 50  # runs per page of the runs page


@login_required
def judge_run_list(request, slug: str):
    """Every run of the project's judges, newest first, a page at a time (the project page's judge
    section shows the recent ones and links here). The pager's htmx request gets the table alone."""
    project = _project(request, slug)
    page = Paginator(selectors.runs_of_project(project=project), RUNS_PAGE).get_page(request.GET.get("page"))
    selectors.runs_mark(page.object_list)
    template = "grading/judges/runs.html#run-list" if htmx_partial(request, "run-list") else "grading/judges/runs.html"
    return render(request, template, {"project": project, "page": page})


@login_required
def judge_run_page(request, slug: str, run_id: int):
    """One run: when it ran, what it did and cost, and the configuration it used."""
    project = _project(request, slug)
    run = selectors.run_get_for_manager(project=project, run_id=run_id, user=request.user)
    live = run.status in (JudgeRun.QUEUED, JudgeRun.RUNNING, JudgeRun.STOPPING)
    template = "grading/judges/run.html#live" if request.htmx else "grading/judges/run.html"
    return render(request, template, {"project": project, "run": run, "live": live, **selectors.run_figures(run=run)})


@login_required
@require_POST
def judge_run_start(request, slug: str):
    project = _project(request, slug)
    form = RunStartForm(request.POST, project=project)
    if form.is_valid():
        try:
            judge = form.cleaned_data["judge"]
            if form.cleaned_data.get("variant"):
                judge = services.judge_variant(judge=judge, variant=form.cleaned_data["variant"])
            services.judge_run_start(judge=judge, scope=form.scope(), user=request.user,
                                     budget_usd=form.cleaned_data.get("budget_usd"))
        except ValidationError as exc:
            form.add_error(None, exc)
    if form.errors:
        if request.htmx:  # htmx 2 does not swap 4xx: re-render the form, status 200
            response = render(request, f"{SECTION}#judge-run-form", section_context(project=project, run_form=form))
            return retarget(response, "#judge-run-form")
        messages.error(request, "; ".join(e for errors in form.errors.values() for e in errors))
    return _runs_response(request, project)


@login_required
@require_POST
def judge_run_stop(request, slug: str, run_id: int):
    project = _project(request, slug)
    run = selectors.run_get_for_manager(project=project, run_id=run_id, user=request.user)
    services.judge_run_stop(run=run)
    return _runs_response(request, project, run)


@login_required
@require_POST
def judge_run_resume(request, slug: str, run_id: int):
    project = _project(request, slug)
    run = selectors.run_get_for_manager(project=project, run_id=run_id, user=request.user)
    form = RunResumeForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Run {run.pk} not resumed: {form.errors_text()}")
        return _runs_response(request, project, run)
    try:
        services.judge_run_resume(run=run, budget_usd=form.cleaned_data.get("budget_usd"))
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return _runs_response(request, project, run)


def _save_judge(project, form, user) -> str:
    judge = form.save(commit=False)
    services.judge_save(judge=judge, by=user)
    return f"Judge {judge.name} saved."


def _save_panel(project, form, user) -> str:
    d = form.cleaned_data
    services.judge_panel_create(project=project, name=d["name"], members=d["members"], vote=d["vote"], weights=d["weights"],
                                by=user)
    return f"Panel {d['name']} saved."


def _save_cross(project, form, user) -> str:
    d = form.cleaned_data
    made = services.judge_cross_evaluation_create(
        project=project, models=d["models"], base_url=d["base_url"], api_key_env=d["api_key_env"],
        temperature=d["temperature"], samples=d["samples"], by=user,
    )
    return f"{len(made)} judges saved: {', '.join(j.name for j in made)}."


PAGE_FORMS = {"judge": (JudgeForm, _save_judge), "panel": (PanelForm, _save_panel), "cross": (CrossEvaluationForm, _save_cross)}


@login_required
def judges_page(request, slug: str):
    """Configure the project's judges: a new judge, a panel, a cross-evaluation pair set.
    Each form posts ``action`` = judge | panel | cross and carries that prefix."""
    project = _project(request, slug)
    forms = {name: cls(project=project, prefix=name) for name, (cls, _) in PAGE_FORMS.items()}
    action = request.POST.get("action") if request.method == "POST" else None
    if action in PAGE_FORMS:
        cls, save = PAGE_FORMS[action]
        form = forms[action] = cls(request.POST, project=project, prefix=action)
        if form.is_valid():
            try:
                messages.success(request, save(project, form, request.user))
                return redirect("judges-page", slug=slug)
            except ValidationError as exc:
                form.add_error(None, exc)
    context = section_context(project=project)
    context.update(judge_form=forms["judge"], panel_form=forms["panel"], cross_form=forms["cross"])
    return render(request, "grading/judges/judges.html", context)


@login_required
def judge_edit(request, slug: str, judge_id: int):
    """Change one judge (an LLM judge or the baseline): the same form and checks as a new one,
    saved and audited by ``judge_save``."""
    project = _project(request, slug)
    judge = selectors.judge_get_for_manager(project=project, judge_id=judge_id, user=request.user)
    form = JudgeForm(request.POST or None, instance=judge, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            messages.success(request, _save_judge(project, form, request.user))
            return redirect("judges-page", slug=slug)
        except ValidationError as exc:
            form.add_error(None, exc)
    return render(request, "grading/judges/edit.html", {"project": project, "judge": judge, "form": form})


@login_required
def side_by_side_lookup(request, slug: str):
    """``?response=<response id>`` of the project: redirect to that response's side-by-side page."""
    project = _project(request, slug, action="inspect")
    response = get_object_or_404(Response, project=project, external_id=request.GET.get("response", ""))
    return redirect("response-side-by-side", pk=response.pk)


@login_required
def side_by_side(request, pk: int):
    response = selectors.response_get_for_inspection(response_id=pk, user=request.user)
    table = selectors.side_by_side(response=response)
    return render(request, "grading/judges/side_by_side.html", {"table": table, "project": response.project, "response": response})
