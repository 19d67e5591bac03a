"""HTML views of the annotation app."""
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from .models import CohortMembership


@login_required
def home(request):
    memberships = CohortMembership.objects.filter(user=request.user).select_related("project", "cohort")
    return render(request, "annotation/home.html", {"memberships": memberships})
