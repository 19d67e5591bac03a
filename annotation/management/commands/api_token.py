"""``manage.py api_token USER [--keep] [--json]``: create the user's API token (replacing the old
one) and print it; ``--keep`` prints the existing token instead when there is one."""
from django.contrib.auth import get_user_model

from annotation.tokens import api_token_issue
from evalsite.cli import JsonCommand, fail


class Command(JsonCommand):
    help = "Create (or with --keep, show) a user's API token: Authorization: Token KEY."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("user")
        parser.add_argument("--keep", action="store_true", help="print the existing token if the user has one")

    def run(self, **options) -> dict:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            fail(f"unknown user {options['user']!r}")
        if not user.is_active:
            fail(f"user {options['user']!r} is inactive")
        return {"token": api_token_issue(user=user, rotate=not options["keep"])}

    def render(self, result: dict) -> str:
        return result["token"]
