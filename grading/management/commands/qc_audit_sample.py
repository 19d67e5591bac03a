"""``manage.py qc_audit_sample --project SLUG [--share 0.2] [--seed 0]``: draw a seeded share of the
cases that are not excluded for senior audit (SPEC §5; ``grading.qc.services.qc_audit_sample``)."""
from evalsite.cli import JsonCommand
from grading.qc.services import qc_audit_sample
from grading.sources import project_get


class Command(JsonCommand):
    help = "Draw a seeded sample of the remaining cases for senior audit."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--share", type=float, default=0.2, help="share of the eligible cases, in (0, 1] (default 0.2)")
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")

    def run(self, **options) -> dict:
        project = project_get(slug=options["project"])
        return qc_audit_sample(project=project, share=options["share"], seed=options["seed"])

    def render(self, result: dict) -> str:
        head = f"{len(result['cases'])} of {result['n_eligible']} cases drawn for audit (share {result['share']:g}, seed {result['seed']})"
        return "\n".join([head, *(f"  {case}" for case in result["cases"])])
