"""Project roles for tests: ``grant(user, project)`` makes a user a manager (or another role)."""


def grant(user, project, role: str = "manager"):
    from annotation.models import ProjectRole

    ProjectRole.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return user
