"""``manage.py run_judge --project SLUG --judge NAME [--resume RUN] [--variant reversed|paraphrased]
[--json]`` (SPEC §5): run a
judge synchronously in this process, for scripts; prints
``{"run", "judgments", "invalid", "cache_hits", "calls", "cost_usd", "seconds"}``; calls that
failed after their retries are stored, and counted, as invalid judgments."""
import time

from django.core.exceptions import ValidationError

from annotation.models import Project
from evalsite.cli import JsonCommand, fail
from grading.judges.runner import judge_run_execute
from grading.judges.services import judge_run_create, judge_run_resume, judge_variant
from grading.models import Judge, JudgeRun


class Command(JsonCommand):
    help = "Run a judge over a project (or a slice) synchronously and print its figures."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--project", required=True)
        parser.add_argument("--judge", required=True)
        parser.add_argument("--cases", nargs="*", default=[], help="case ids (default: all)")
        parser.add_argument("--models", nargs="*", default=[], help="source models (default: all)")
        parser.add_argument("--criteria", nargs="*", default=[], help="criterion ids (default: all)")
        parser.add_argument("--resume", type=int, help="resume this run instead of starting a new one")
        parser.add_argument("--budget", help="USD: the run pauses when its cost reaches this (with --resume: the new budget)")
        parser.add_argument("--variant", choices=["reversed", "paraphrased"],
                            help="run on a rubric variant, as the judge NAME~VARIANT (issue 13: robustness)")

    def run(self, **options) -> dict:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            fail(f"unknown project {options['project']!r}")
        judge = Judge.objects.filter(project=project, name=options["judge"]).select_related("prompt_template").first()
        if judge is None:
            fail(f"unknown judge {options['judge']!r} in project {project.slug!r}")
        scope = {k: options[k] for k in ("cases", "models", "criteria") if options[k]}
        started = time.perf_counter()
        try:
            if options["resume"]:
                run = JudgeRun.objects.filter(pk=options["resume"], judge=judge).first()
                if run is None:
                    fail(f"judge {judge.name!r} has no run {options['resume']}")
                run = judge_run_resume(run=run, enqueue=False, budget_usd=options["budget"])
            else:
                if options.get("variant"):
                    judge = judge_variant(judge=judge, variant=options["variant"])
                run = judge_run_create(judge=judge, scope=scope, budget_usd=options["budget"])
        except ValidationError as exc:
            fail("; ".join(exc.messages))
        try:
            summary = judge_run_execute(run=run)
        except Exception as exc:  # the run is marked failed with the error; say so in one line
            fail(f"run {run.pk} failed: {str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__}")
        result = summary.as_dict()
        result["seconds"] = round(time.perf_counter() - started, 3)
        if summary.status != JudgeRun.FINISHED:
            run.refresh_from_db()
            fail(f"run {run.pk} ended {summary.status}" + (f": {run.error}" if run.error else ""))
        # A call that failed after its retries is stored as an invalid judgment too (SPEC §3).
        result["judgments"] += result["failed"]
        result["invalid"] += result["failed"]
        return {k: result[k] for k in ("run", "judgments", "invalid", "cache_hits", "calls", "cost_usd", "seconds")}

    def render(self, result: dict) -> str:
        return (
            f"run {result['run']}: {result['judgments']} judgments ({result['invalid']} invalid), "
            f"{result['calls']} calls, {result['cache_hits']} cache hits, ${result['cost_usd']:.6f}, {result['seconds']} s"
        )

