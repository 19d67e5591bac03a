"""The routing form's POST (managers only, ``annotation.access``): raise a cohort's routing budget, then
back to the routed-labelling report page with a message saying what was drawn (or, in words, why not)."""
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.access import project_get_for
from annotation.models import Cohort
from evalsite.refusals import form_problems, refusal_text

from .services import MAX_SEED, routing_extend


class ExtendForm(forms.Form):
    cohort = forms.IntegerField(min_value=1)
    budget = forms.IntegerField(min_value=1)
    seed = forms.IntegerField(min_value=0, max_value=MAX_SEED, required=False)


def _back(request, slug: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(target)
    return redirect(reverse("report-routing", kwargs={"slug": slug}))


@login_required
@require_POST
def routing_extend_submit(request, slug: str):
    project = project_get_for(user=request.user, action="manage", slug=slug)
    form = ExtendForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing drawn: {form_problems(form)}")
        return _back(request, slug)
    cohort = Cohort.objects.filter(project=project, pk=form.cleaned_data["cohort"]).first()
    if cohort is None:
        messages.error(request, "Nothing drawn: no such cohort in this project")
        return _back(request, slug)
    try:
        done = routing_extend(project=project, cohort=cohort, budget=form.cleaned_data["budget"], by=request.user,
                              seed=form.cleaned_data.get("seed"))
    except ValidationError as exc:
        messages.error(request, f"Nothing drawn: {refusal_text(exc)}")
        return _back(request, slug)
    messages.success(request, f"Cohort {cohort.name}: {done.chosen_now} more response{'s' if done.chosen_now != 1 else ''} "
                              f"drawn ({done.chosen} of {done.population} in all), {done.assignments} assignment"
                              f"{'s' if done.assignments != 1 else ''} made.")
    return _back(request, slug)
