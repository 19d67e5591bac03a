"""``manage.py project_role --project SLUG --user NAME --role manager|adjudicator|viewer|none``:
give a user a role in a project, change it, or take it away (``none``). Recorded in the
project's audit trail like a change on the project page."""
from django.core.exceptions import ValidationError

from annotation.models import Project
from annotation.projects import ROLE_CHOICES, project_role_set
from evalsite.cli import JsonCommand, fail


class Command(JsonCommand):
    help = "Set a user's role in a project (manager, adjudicator, viewer, or none to remove it)."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--user", required=True)
        parser.add_argument("--role", required=True, help=" | ".join(ROLE_CHOICES))

    def run(self, **options) -> dict:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            fail(f"unknown project {options['project']!r}")
        try:
            role = project_role_set(project=project, username=options["user"], role=options["role"])
        except ValidationError as exc:
            fail("; ".join(exc.messages))
        return {"project": project.slug, "user": options["user"], "role": role.role if role else None}
