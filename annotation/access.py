"""Who may do what in a project: the one place where project roles are checked (issue 10).

Every page, partial, API view and admin class that shows or changes a project's data fetches
the project through ``project_get_for`` (or asks ``user_may``) with the action it performs:

==============  ==========================================================  =====================
action          what                                                        roles
==============  ==========================================================  =====================
``view``        the project page, reports and their CSV                     viewer, adjudicator, manager
``inspect``     side-by-side pages, the decisions API                       adjudicator, manager
``adjudicate``  the adjudication queue and decisions                        adjudicator, manager
``export``      gold export (a read of the adjudicated set)                 adjudicator, manager
``manage``      import, cohorts, assignments, judges and runs, roles, QC    manager
==============  ==========================================================  =====================

Superusers may do everything; ``is_staff`` alone grants nothing in a project. A user with no
role in a project gets 404 for its objects (its existence is not revealed); a role that does not
allow the action gets 403. Annotators and checkers are cohort members, checked by the
annotation selectors, not here.
"""
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from .models import Project, ProjectRole

MANAGER, ADJUDICATOR, VIEWER = ProjectRole.MANAGER, ProjectRole.ADJUDICATOR, ProjectRole.VIEWER
ACTIONS: dict[str, tuple[str, ...]] = {
    "view": (VIEWER, ADJUDICATOR, MANAGER),
    "inspect": (ADJUDICATOR, MANAGER),
    "adjudicate": (ADJUDICATOR, MANAGER),
    "export": (ADJUDICATOR, MANAGER),
    "manage": (MANAGER,),
}


def _check_action(action: str) -> tuple[str, ...]:
    try:
        return ACTIONS[action]
    except KeyError:
        raise ValueError(f"unknown project action {action!r}") from None


def role_of(*, project: Project | int, user) -> str | None:
    """The user's role in the project ("superuser" for superusers), or None."""
    if user is None or not user.is_authenticated:
        return None
    if user.is_superuser:
        return "superuser"
    project_id = project.pk if isinstance(project, Project) else project
    return ProjectRole.objects.filter(project_id=project_id, user_id=user.pk).values_list("role", flat=True).first()


def user_may(*, project: Project | int, user, action: str) -> bool:
    allowed = _check_action(action)
    role = role_of(project=project, user=user)
    return role == "superuser" or role in allowed


def project_get_for(*, user, action: str, slug: str | None = None, project_id: int | None = None) -> Project:
    """The project, if ``user`` may perform ``action`` in it: Http404 when it does not exist or the
    user has no role in it, PermissionDenied when the role does not allow the action."""
    allowed = _check_action(action)
    queryset = Project.objects.all()
    if user is not None and user.is_authenticated and not user.is_superuser:
        # The project and the user's role in one query: this runs on every page view.
        mine = ProjectRole.objects.filter(project_id=OuterRef("pk"), user_id=user.pk).values("role")[:1]
        queryset = queryset.annotate(user_role=Subquery(mine))
    project = queryset.filter(slug=slug).first() if slug is not None else queryset.filter(pk=project_id).first()
    if project is None:
        raise Http404("No such project")
    if user is None or not user.is_authenticated:
        role = None
    else:
        role = "superuser" if user.is_superuser else project.user_role
    if role is None:
        raise Http404("No such project")
    if role != "superuser" and role not in allowed:
        raise PermissionDenied(f"Your role in {project.slug} ({role}) does not allow this")
    return project


def project_check(*, project: Project | int, user, action: str) -> None:
    """``project_get_for`` for an object already loaded (e.g. a response's project)."""
    project_get_for(user=user, action=action, project_id=project.pk if isinstance(project, Project) else project)


def projects_for(*, user, action: str = "view") -> QuerySet:
    """The projects in which ``user`` may perform ``action``."""
    allowed = _check_action(action)
    if user is None or not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(roles__user_id=user.pk, roles__role__in=allowed).distinct()


def roles_by_project(*, user) -> dict[int, str]:
    """{project id: role} of every project the user has a role in (for listings)."""
    return dict(ProjectRole.objects.filter(user_id=user.pk).values_list("project_id", "role"))
