"""The quality-control page of a project (managers only, ``annotation.access``): the counts, the
screening form, the audit-sample form, an outcome form for each case drawn for audit and a
reinstate form for each flagged case. The two lists of cases show 25 rows a page each (their own
``sampled_page`` / ``flagged_page``; the pager's htmx request gets the one list alone). Each form
is a plain POST that calls one service of ``grading.qc.services`` and redirects back to the page,
at the pages it was sent from, with a message (the error, if any, in words).
"""
from urllib.parse import urlencode, urlsplit

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.access import project_get_for
from annotation.models import Case
from annotation.templatetags.pager_tags import htmx_partial
from evalsite.refusals import form_problems, refusal_text

from .rules import MAX_NOTE, OUTCOMES
from .selectors import qc_lists, qc_screen_choices, qc_summary
from .services import qc_audit_record, qc_audit_sample, qc_reinstate, qc_screen


class ScreenForm(forms.Form):
    source = forms.CharField(max_length=300)
    threshold = forms.FloatField(min_value=0, max_value=100)


class SampleForm(forms.Form):
    share = forms.FloatField(min_value=0, max_value=1)
    seed = forms.IntegerField()


class OutcomeForm(forms.Form):
    outcome = forms.ChoiceField(choices=[(o, o) for o in OUTCOMES])
    note = forms.CharField(max_length=MAX_NOTE, required=False)


class ReinstateForm(forms.Form):
    note = forms.CharField(max_length=MAX_NOTE)



def _case(project, case_id: int) -> Case:
    case = Case.objects.select_related("project").filter(pk=case_id, project=project).first()
    if case is None:
        raise Http404("No such case in this project")
    return case


QC_PAGE = 25  # rows per page of each list of the quality page (each row has its form)
PAGE_PARAMS = ("sampled_page", "flagged_page")
PARTIALS = {"qc-sampled-list": "sampled-list", "qc-flagged-list": "flagged-list"}


def _back(request, slug: str, anchor: str = ""):
    """The quality page again, at the pages of its lists the form was sent from: those of the page's
    address when the browser names it (the referrer, which follows the pager's htmx swaps; the
    form's hidden pages were those of the first render), else the form's."""
    page = reverse("qc-page", args=[slug])
    referrer = urlsplit(request.META.get("HTTP_REFERER", ""))
    sent = QueryDict(referrer.query) if referrer.path == page else request.POST
    pages = {name: value for name in PAGE_PARAMS if (value := sent.get(name, "")).isdigit()}
    return redirect(page + (f"?{urlencode(pages)}" if pages else "") + anchor)


@login_required
def qc_page(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    lists = {name: Paginator(rows, QC_PAGE).get_page(request.GET.get(f"{name}_page"))
             for name, rows in qc_lists(project=project).items()}
    for target, partial in PARTIALS.items():
        if htmx_partial(request, target):
            return render(request, f"grading/qc/page.html#{partial}", {"project": project, "outcomes": OUTCOMES, **lists})
    summary = qc_summary(project=project)
    last = summary["last_screen"].after if summary["last_screen"] else {}
    defaults = {"source": last.get("source", ""), "models": last.get("models", []), "threshold": last.get("threshold_pct", 50.0)}
    return render(request, "grading/qc/page.html", {
        "project": project, **summary, **lists, "choices": qc_screen_choices(project=project), "defaults": defaults,
    })


@login_required
@require_POST
def qc_screen_submit(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = ScreenForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Screening not run: {form_problems(form)}")
        return redirect("qc-page", slug=slug)
    try:
        result = qc_screen(project=project, source=form.cleaned_data["source"], models=request.POST.getlist("models"),
                           threshold_pct=form.cleaned_data["threshold"], user=request.user)
    except (ValueError, LookupError, ValidationError) as exc:
        messages.error(request, f"Screening not run: {refusal_text(exc)}")
    else:
        messages.success(request, f"Screened {result['n_cases']} cases: {len(result['flagged'])} flagged at or above "
                                  f"{result['threshold']:g} % for exclusion.")
    return redirect("qc-page", slug=slug)


@login_required
@require_POST
def qc_sample_submit(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = SampleForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No sample drawn: {form_problems(form)}")
        return redirect("qc-page", slug=slug)
    try:
        result = qc_audit_sample(project=project, share=form.cleaned_data["share"], seed=form.cleaned_data["seed"],
                                 user=request.user)
    except (ValueError, ValidationError) as exc:
        messages.error(request, f"No sample drawn: {refusal_text(exc)}")
    else:
        messages.success(request, f"Drew {len(result['cases'])} of {result['n_eligible']} cases for audit.")
    return redirect("qc-page", slug=slug)


@login_required
@require_POST
def qc_outcome_submit(request, slug: str, case_id: int):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    case = _case(project, case_id)
    form = OutcomeForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError(form_problems(form))
        qc_audit_record(case=case, outcome=form.cleaned_data["outcome"], note=form.cleaned_data["note"], user=request.user)
    except ValidationError as exc:
        messages.error(request, f"Case {case.external_id}: {refusal_text(exc)}")
    else:
        messages.success(request, f"Case {case.external_id}: {form.cleaned_data['outcome']} recorded.")
    return _back(request, slug, f"#qc-case-{case.pk}")


@login_required
@require_POST
def qc_reinstate_submit(request, slug: str, case_id: int):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    case = _case(project, case_id)
    form = ReinstateForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError(form_problems(form))
        qc_reinstate(case=case, user=request.user, note=form.cleaned_data["note"])
    except ValidationError as exc:
        messages.error(request, f"Case {case.external_id}: {refusal_text(exc)}")
    else:
        messages.success(request, f"Case {case.external_id} reinstated: it counts in reports again.")
    return _back(request, slug, f"#qc-flagged-{case.pk}")
