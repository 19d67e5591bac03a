"""Writes for judges: validating and saving judge configurations (including panels), creating
the attributed / anonymized judge pairs of a cross-evaluation, saving prompt template
versions, and starting, stopping and resuming runs (queued on Celery after commit).
"""
import re
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import DecimalValidator
from django.db import transaction
from django.utils import timezone

from annotation.models import Cohort, Project, Response
from annotation.projects import audit_record
from evalsite.codes import CONFLICT, NOT_FOUND

from ..models import Judge, JudgeRun, PromptTemplate
from .backends import backend_for, backend_get
from .dispatch import judge_run_dispatch
from .endpoints import endpoint_problems
from .plan import SCOPE_KEYS, fewshot_refusal
from .selectors import judge_run_resumable
from .settings import RUBRIC_VARIANTS, SettingsError

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def judge_validate(*, judge: Judge) -> None:
    """Check a judge configuration; raises ``ValidationError`` keyed by field. The backend says
    how its settings read and what else it needs (a model, members...)."""
    try:
        backend = backend_get(judge.backend)
    except LookupError as exc:
        raise ValidationError({"backend": str(exc.args[0])}) from None
    try:
        settings = backend.settings_parse(judge.settings)
    except SettingsError as exc:
        raise ValidationError({"settings": str(exc)}) from None
    if judge.api_key_env and not ENV_NAME.match(judge.api_key_env):
        # Catches the commonest mistake: pasting the key itself where its variable's name goes.
        raise ValidationError({"api_key_env": "give the name of an environment variable (e.g. OPENAI_API_KEY), never the key"})
    problems = endpoint_problems(base_url=judge.base_url, api_key_env=judge.api_key_env, calls_out=backend.calls_out)
    if problems:
        raise ValidationError(problems)
    if judge.concurrency < 1:
        raise ValidationError({"concurrency": "the concurrency limit must be at least 1"})
    if settings.few_shot_cohort and judge.project_id and not Cohort.objects.filter(
        project_id=judge.project_id, name=settings.few_shot_cohort
    ).exists():
        raise ValidationError({"settings": ValidationError(
            f"settings.few_shot.cohort: no cohort {settings.few_shot_cohort!r} in this project", code=NOT_FOUND)})
    problems = backend.validate(judge=judge, settings=settings)
    if problems:
        raise ValidationError(problems)


AUDITED_FIELDS = ("name", "backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples",
                  "concurrency", "max_retries", "price_in_per_mtok", "price_out_per_mtok", "settings", "prompt_template_id")


def judge_snapshot(judge: Judge) -> dict:
    """A judge's configuration as JSON (the audit trail's before / after)."""
    return {name: float(value) if isinstance(value, Decimal) else value
            for name in AUDITED_FIELDS for value in [getattr(judge, name)]}


@transaction.atomic
def judge_save(*, judge: Judge, by=None) -> Judge:
    """Validate and save ``judge``; a creation or a change is recorded in the project's audit
    trail (who, when, before and after), an unchanged save is not."""
    judge_validate(judge=judge)
    stored = Judge.objects.filter(pk=judge.pk).first() if judge.pk else None
    before = judge_snapshot(stored) if stored else None
    judge.save()
    after = judge_snapshot(judge)
    if before != after:
        audit_record(project=judge.project, actor=by, action="judge", target=judge.name, before=before, after=after,
                     note="created" if before is None else "changed")
    return judge


@transaction.atomic
def judge_delete(*, judge: Judge, by=None) -> None:
    audit_record(project=judge.project, actor=by, action="judge", target=judge.name, before=judge_snapshot(judge),
                 after=None, note="deleted")
    judge.delete()


def judge_panel_create(*, project: Project, name: str, members: list[str], vote: str = "majority",
                       weights: dict[str, float] | None = None, by=None) -> Judge:
    """A panel: a derived source voting over its member judges' decisions (SPEC §3 ensemble vote)."""
    settings = {"members": list(members), "vote": vote}
    if weights:
        settings["weights"] = dict(weights)
    return judge_save(judge=Judge(project=project, name=name, backend=Judge.PANEL, settings=settings), by=by)


@transaction.atomic
def judge_cross_evaluation_create(
    *, project: Project, models: list[str], base_url: str, api_key_env: str = "", temperature: float = 0.7,
    samples: int = 1, concurrency: int = 8, max_retries: int = 3, settings: dict | None = None,
    prompt_template: PromptTemplate | None = None, by=None,
) -> list[Judge]:
    """For each judge model that is also a response source, the pair ``<model>-attributed`` and
    ``<model>-anonymized`` (created or updated), so the bias matrix can compare conditions."""
    sources = set(Response.objects.filter(project=project).values_list("model", flat=True))
    unknown = [m for m in models if m not in sources]
    if unknown:
        raise ValidationError(f"model {unknown[0]!r} wrote no response in {project.slug}; cross-evaluation judges source models")
    judges = []
    for model in models:
        for condition in (Judge.ATTRIBUTED, Judge.ANONYMIZED):
            judge = Judge.objects.filter(project=project, name=f"{model}-{condition}").first() or Judge(
                project=project, name=f"{model}-{condition}"
            )
            judge.backend, judge.model, judge.base_url, judge.api_key_env = Judge.OPENAI, model, base_url, api_key_env
            judge.condition, judge.temperature, judge.samples = condition, temperature, samples
            judge.concurrency, judge.max_retries = concurrency, max_retries
            judge.settings, judge.prompt_template = dict(settings or {}), prompt_template
            judges.append(judge_save(judge=judge, by=by))
    return judges


@transaction.atomic
def prompt_template_save(*, name: str, system: str, binary_user: str, option_user: str, by=None) -> PromptTemplate:
    """Save a template: the latest version when unchanged, else the next version, recorded in the
    audit trail (templates belong to no project: every project whose judges use one shows it)."""
    latest = PromptTemplate.objects.select_for_update().filter(name=name).order_by("-version").first()
    content = (system, binary_user, option_user)
    if latest is not None and (latest.system, latest.binary_user, latest.option_user) == content:
        return latest
    template = PromptTemplate.objects.create(
        name=name, version=(latest.version + 1) if latest else 1, system=system, binary_user=binary_user,
        option_user=option_user,
    )
    audit_record(project=None, actor=by, action="prompt_template", target=name,
                 before={"version": latest.version} if latest else None,
                 after={"version": template.version, "system": system, "binary_user": binary_user, "option_user": option_user})
    return template


def _scope_clean(scope: dict | None) -> dict:
    scope = scope or {}
    unknown = sorted(set(scope) - set(SCOPE_KEYS))
    if unknown:
        raise ValidationError(f"unknown scope key {unknown[0]!r} (use {', '.join(SCOPE_KEYS)})")
    clean = {}
    for key in SCOPE_KEYS:
        values = scope.get(key) or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValidationError(f"scope {key!r} must be a list of ids")
        if values:
            clean[key] = values
    return clean


def _enqueue(run: JudgeRun) -> None:
    transaction.on_commit(lambda: judge_run_dispatch(run_id=run.pk))


@transaction.atomic
def _budget_clean(budget_usd) -> Decimal | None:
    if budget_usd is None or budget_usd == "":
        return None
    try:
        budget = Decimal(str(budget_usd))
    except ArithmeticError:
        raise ValidationError({"budget_usd": f"budget {budget_usd!r} is not a number of dollars"}) from None
    if not budget.is_finite() or budget < 0:
        raise ValidationError({"budget_usd": "the budget must be zero or more dollars"})
    column = JudgeRun._meta.get_field("budget_usd")  # what every database can store, checked on every one
    try:
        DecimalValidator(column.max_digits, column.decimal_places)(budget)
    except ValidationError as exc:
        raise ValidationError({"budget_usd": f"budget {budget_usd!s}: {' '.join(exc.messages)}"}) from None
    return budget


VARIANT_FIELDS = ("backend", "model", "base_url", "api_key_env", "condition", "temperature", "samples", "concurrency",
                  "max_retries", "price_in_per_mtok", "price_out_per_mtok", "prompt_template")


@transaction.atomic
def judge_variant(*, judge: Judge, variant: str) -> Judge:
    """The judge that runs ``judge`` on a rubric variant (issue 13, point 5): ``NAME~reversed``
    (options and checklists in reverse order) or ``NAME~paraphrased`` (the criteria's paraphrased
    texts), a copy of its configuration with ``settings.variant`` and ``variant_of``, so its runs
    and judgments stand beside the original's. Kept in step with the original on every call."""
    if variant not in RUBRIC_VARIANTS:
        raise ValidationError(f"unknown rubric variant {variant!r}; use {' or '.join(RUBRIC_VARIANTS)}")
    backend = backend_for(judge)
    try:
        perturbed = bool(backend.settings_parse(judge.settings).variant)
    except SettingsError as exc:
        raise ValidationError({"settings": str(exc)}) from None
    if not backend.executes_calls or perturbed:
        raise ValidationError(f"judge {judge.name!r} cannot be run on a rubric variant (it is not a judge that is run, "
                              "or already a variant)", code=CONFLICT)
    values = {name: getattr(judge, name) for name in VARIANT_FIELDS}
    values["settings"] = {**(judge.settings or {}), "variant": variant, "variant_of": judge.name}
    derived, _ = Judge.objects.update_or_create(project=judge.project, name=f"{judge.name}~{variant}", defaults=values)
    return derived


def judge_run_create(*, judge: Judge, scope: dict | None = None, user=None, budget_usd=None) -> JudgeRun:
    """A queued run of ``judge`` over the project or a slice (not yet queued on Celery).
    ``budget_usd``: the run pauses once its cost reaches it (None: no cap)."""
    backend = backend_for(judge)
    if backend.votes_over_members:
        raise ValidationError(f"judge {judge.name!r} is a panel: it is derived from its members and never run", code=CONFLICT)
    try:
        judge_validate(judge=judge)
    except ValidationError as exc:  # the stored judge, not the request: its configuration refuses the run
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"judge": exc.messages}
        raise ValidationError({name: [ValidationError(m, code=CONFLICT) for m in messages]
                               for name, messages in fields.items()}) from None
    scope = _scope_clean(scope)
    settings = backend.settings_parse(judge.settings)
    if backend.executes_calls and not backend.compiled(settings):  # compiled calls show no examples
        refusal = fewshot_refusal(judge=judge, settings=settings, scope=scope)
        if refusal:
            raise ValidationError(refusal)
    return JudgeRun.objects.create(judge=judge, scope=scope, created_by=user, budget_usd=_budget_clean(budget_usd))


@transaction.atomic
def judge_run_start(*, judge: Judge, scope: dict | None = None, user=None, budget_usd=None) -> JudgeRun:
    """Create a run and queue it on Celery once the transaction commits."""
    run = judge_run_create(judge=judge, scope=scope, user=user, budget_usd=budget_usd)
    _enqueue(run)
    return run


@transaction.atomic
def judge_run_stop(*, run: JudgeRun) -> JudgeRun:
    """Ask a run to stop: a queued run stops at once, a running one after its in-flight calls."""
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.QUEUED).update(status=JudgeRun.STOPPED)
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.RUNNING).update(status=JudgeRun.STOPPING)
    run.refresh_from_db()
    return run


@transaction.atomic
def judge_run_resume(*, run: JudgeRun, enqueue: bool = True, budget_usd=None) -> JudgeRun:
    """Queue a stopped, failed, paused or stale run (or one with failed calls) again; finished
    calls are kept. A run paused at its budget resumes only with a budget above what it has
    spent (``budget_usd``); a new budget may be given to any resumed run.

    ``enqueue=False`` only marks it queued, for a caller that executes it itself."""
    run = JudgeRun.objects.select_for_update().get(pk=run.pk)
    if not judge_run_resumable(run=run):
        raise ValidationError(f"run {run.pk} is {run.status} and cannot be resumed", code=CONFLICT)
    budget = _budget_clean(budget_usd)
    if budget is not None:
        run.budget_usd = budget
    if run.budget_usd is not None and run.budget_usd <= run.cost_usd:
        raise ValidationError({"budget_usd": ValidationError(
            f"run {run.pk} has spent ${run.cost_usd:.4f} of its ${run.budget_usd:.4f} budget: "
            "raise the budget above what it has spent to resume it", code=CONFLICT)})
    # The lease is given up too: a stale holder that comes back writes nothing more (LeaseLost).
    run.status, run.error, run.lease_owner = JudgeRun.QUEUED, "", ""
    run.heartbeat_at = timezone.now()  # a queued run's: when it was sent (grading.judges.lease)
    run.save(update_fields=["status", "error", "budget_usd", "lease_owner", "heartbeat_at"])
    if enqueue:
        _enqueue(run)
    return run


BASELINE_NAME = "baseline-lexical"


def judge_baseline_run(*, project: Project, name: str = BASELINE_NAME, scope: dict | None = None):
    """Create the project's offline baseline judge if it is missing and run it here, now
    (no Celery, no network): for demo loading and scripts. Returns the run's ``RunSummary``."""
    from .runner import judge_run_execute  # lazy: the runner brings pandas: loaded where a run executes

    judge = Judge.objects.filter(project=project, name=name).first()
    if judge is None:
        judge = judge_save(judge=Judge(project=project, name=name, backend=Judge.BASELINE, model="lexical-coverage"))
    elif backend_for(judge) is not backend_get(Judge.BASELINE):
        raise ValidationError(f"judge {name!r} exists and is not a baseline judge", code=CONFLICT)
    return judge_run_execute(run=judge_run_create(judge=judge, scope=scope))
