"""The automated and final side of a study (SPEC §2): judges, judge runs, judgments and
adjudications.

A judge's condition (attributed / anonymized) is part of the judge: the same judge model
under both conditions is two judges, so bias reports can compare them (SPEC §3).
"""
from django.conf import settings
from django.db import models

from annotation.models import Cohort, Criterion, Label, Project, Response, RubricVersion


class PromptTemplate(models.Model):
    """A versioned judge prompt. Versions are immutable: editing saves the next version, so a
    judge pinned to a version keeps producing the same prompts (and cache keys).

    The templates use ``string.Template`` placeholders (``$conversation``, ``$response``,
    ``$author``, ``$criterion``, ``$options``, ``$examples``, ``$evidence_rule``); see
    ``grading.judges.prompts``.
    """

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    system = models.TextField(blank=True)
    binary_user = models.TextField(help_text="User message for binary criteria; returns explanation and criteria_met.")
    option_user = models.TextField(help_text="User message for ordinal / nominal criteria; returns explanation and option.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="prompt_template_unique_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


# The registered judge backends by name: filled by ``grading.judges.backends`` (its ``register``),
# every built-in one at start-up (``GradingConfig.ready``). Kept here, below every reader, so the
# read layer (``grading.selectors``) asks a judge for its backend (``Judge.kind``) without
# importing ``grading.judges``, which reads through it.
JUDGE_BACKENDS: dict = {}


class Judge(models.Model):
    # The stored names of the built-in backends, for code that creates judges of them. What a
    # backend is and does is asked of its declaration in ``grading.judges.backends`` (the
    # registry), never decided here or by comparing these names.
    OPENAI, BASELINE, REPLAY, PANEL, CALIBRATED = "openai", "baseline", "replay", "panel", "calibrated"
    ATTRIBUTED, ANONYMIZED = "attributed", "anonymized"
    CONDITIONS = [(ATTRIBUTED, "attributed"), (ANONYMIZED, "anonymized")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    backend = models.CharField(
        max_length=32, default=REPLAY,
        help_text="A registered judge backend's name (grading.judges.backends); forms, the API and the importer "
                  "accept only registered names.",
    )
    model = models.CharField(max_length=200, blank=True, help_text="The judge's own model name.")
    base_url = models.CharField(max_length=500, blank=True)
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Name of the environment variable holding the API key (never the key)."
    )
    condition = models.CharField(max_length=10, choices=CONDITIONS, default=ANONYMIZED)
    temperature = models.FloatField(default=0.0)
    samples = models.PositiveSmallIntegerField(default=1, help_text="Monte Carlo samples per item.")
    concurrency = models.PositiveSmallIntegerField(default=8)
    max_retries = models.PositiveSmallIntegerField(default=3)
    price_in_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_out_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    settings = models.JSONField(
        default=dict, blank=True, help_text="Prompt, few-shot, option shuffling and evidence settings."
    )
    prompt_template = models.ForeignKey(
        PromptTemplate, on_delete=models.PROTECT, null=True, blank=True, related_name="judges",
        help_text="Empty = the built-in ClinConsensus rubric-item template.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="judge_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.backend}, {self.condition})"

    @property
    def kind(self):
        """The registered backend this judge's ``backend`` names (a ``grading.judges.backends.JudgeBackend``)."""
        try:
            return JUDGE_BACKENDS[self.backend]
        except KeyError:
            raise LookupError(f"unknown judge backend {self.backend!r} (known: {', '.join(JUDGE_BACKENDS)})") from None

    @property
    def typed_settings(self):
        """The judge's settings as its backend reads them (a ``JudgeSettings``); ``SettingsError``
        (a ValueError) naming the offending key."""
        return self.kind.settings_parse(self.settings)


class JudgeRun(models.Model):
    QUEUED, RUNNING, STOPPING, STOPPED, FINISHED, FAILED = "queued", "running", "stopping", "stopped", "finished", "failed"
    PAUSED = "paused"  # at its budget: resumed once the budget is raised
    STATUSES = [(s, s) for s in (QUEUED, RUNNING, STOPPING, STOPPED, PAUSED, FINISHED, FAILED)]

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED)
    scope = models.JSONField(default=dict, blank=True, help_text="Slice: case, model and criterion ids; empty = project.")
    total_calls = models.PositiveIntegerField(default=0)
    done_calls = models.PositiveIntegerField(default=0)
    invalid_count = models.PositiveIntegerField(default=0)
    cache_hits = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    budget_usd = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        help_text="The run pauses once its cost reaches this (empty: no cap); raise it to resume.",
    )
    calls_made = models.PositiveIntegerField(default=0, help_text="Backend calls made (cache hits excluded).")
    retries = models.PositiveIntegerField(default=0)
    failed_calls = models.PositiveIntegerField(default=0, help_text="Calls that exhausted their retries.")
    seconds = models.FloatField(default=0.0, help_text="Wall time spent executing, over all attempts.")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the executing worker; a running run without one is resumable."
    )
    config = models.JSONField(
        default=dict, blank=True,
        help_text="The judge's configuration and prompt template version the last execution used (the run page shows it).",
    )
    lease_owner = models.CharField(
        max_length=64, blank=True, help_text="The execution that holds the run (grading.judges.lease); its heartbeat renews it."
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.judge.name} ({self.status})"


class Judgment(models.Model):
    """One judge decision for (response, criterion, sample); writes are idempotent on that key."""

    # The unique (judge, response, criterion, sample) constraint covers judge lookups.
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="judgments", db_index=False)
    run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="judgments")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="judgments")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="judgments")
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.RESTRICT, related_name="judgments", db_index=False)
    sample = models.PositiveSmallIntegerField(default=0)
    condition = models.CharField(max_length=10, choices=Judge.CONDITIONS)
    verdict = models.CharField(max_length=14, choices=Label.VERDICTS, null=True, blank=True)
    option_label = models.CharField(max_length=200, null=True, blank=True)
    value = models.FloatField(null=True, blank=True)
    valid = models.BooleanField(default=True)
    evidence_capped = models.BooleanField(default=False, help_text="Capped by the evidence check (SPEC §3).")
    explanation = models.TextField(blank=True)
    evidence = models.JSONField(default=list, blank=True)
    raw = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=8, default=0)
    # db_default too: the bundle importer writes judgments with raw INSERT / COPY.
    cached = models.BooleanField(default=False, db_default=False, help_text="Served from the request cache (no cost).")
    error = models.TextField(
        blank=True, default="", db_default="", help_text="Transport failure after all retries; the call is redone on resume."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "response", "criterion", "sample"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "response", "criterion", "sample"], name="judgment_unique_call"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.name}: {self.response}/{self.criterion}#{self.sample}"


class JudgeCacheEntry(models.Model):
    """A persistent cache of backend answers, keyed by sha256 of (model, messages, parameters,
    sample index), so that re-running a judge, or another judge sending the same request,
    costs nothing. Only answers are cached, never transport failures."""

    key = models.CharField(max_length=64, unique=True)
    model = models.CharField(max_length=200)
    text = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "judge cache entries"

    def __str__(self) -> str:
        return f"{self.model} {self.key[:12]}"


class Adjudication(models.Model):
    """The final (gold) decision of an adjudicator for (response, criterion), with how sure they
    are, what kind of disagreement it settled, and a note. Every change appends a history row
    (``AdjudicationHistory``) in the same transaction; ``revision`` guards concurrent edits."""

    CERTAIN, PROBABLE, UNCERTAIN = "certain", "probable", "uncertain"
    CONFIDENCES = [(CERTAIN, "certain"), (PROBABLE, "probable"), (UNCERTAIN, "uncertain")]
    CATEGORIES = [
        ("rubric_ambiguity", "rubric ambiguity"), ("implicit_content", "implicit-but-unverifiable content"),
        ("annotator_slip", "annotator slip"), ("judge_error", "judge error"), ("other", "other"),
    ]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="adjudications")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="adjudications")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="adjudications")
    verdict = models.CharField(max_length=14, choices=Label.VERDICTS, null=True, blank=True)
    option_label = models.CharField(max_length=200, null=True, blank=True)
    value = models.FloatField(null=True, blank=True)
    confidence = models.CharField(max_length=10, choices=CONFIDENCES, blank=True)
    category = models.CharField(max_length=20, choices=CATEGORIES, blank=True)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    note = models.TextField(blank=True)
    revision = models.PositiveIntegerField(default=1, help_text="Bumped on every change; guards concurrent edits.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "response", "criterion"]
        constraints = [
            models.UniqueConstraint(fields=["response", "criterion"], name="adjudication_unique_item"),
        ]


class AdjudicationHistory(models.Model):
    """Append-only record of every change to an adjudication: who, when, old state, new state."""

    adjudication = models.ForeignKey(Adjudication, on_delete=models.CASCADE, related_name="history")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=20)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["adjudication", "changed_at", "id"]
        verbose_name_plural = "adjudication history"
        indexes = [models.Index(fields=["project", "id"], name="adjhistory_project_id")]


class DataJob(models.Model):
    """A gold export or a bundle import run by a Celery worker for a browser user: status,
    progress and, when done, the file to download or the import's counts (or its error)."""

    EXPORT, IMPORT = "export", "import"
    KINDS = [(EXPORT, "gold export"), (IMPORT, "bundle import")]
    QUEUED, RUNNING, FINISHED, FAILED = "queued", "running", "finished", "failed"
    STATUSES = [(s, s) for s in (QUEUED, RUNNING, FINISHED, FAILED)]
    # An upload of a format read column by column waits, queued but not sent to a worker, until its
    # uploader has chosen which column is which field (grading.jobs.data_job_columns_choose).
    COLUMNS_STAGE = "choose columns"

    kind = models.CharField(max_length=8, choices=KINDS)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="data_jobs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED)
    progress_pct = models.FloatField(default=0.0)
    stage = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    file = models.CharField(max_length=500, blank=True, help_text="The job's file (upload or export), under the jobs directory.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Written while the job runs; a running job silent for longer than the lease "
                                         "(EVALSITE_JOB_LEASE_SECONDS) lost its worker and is run again.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker started it.")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    @property
    def awaiting_columns(self) -> bool:
        return self.status == self.QUEUED and self.stage == self.COLUMNS_STAGE


class RoutingDesign(models.Model):
    """How a cohort's labelling budget is routed over the responses (``grading.routing``): responses the
    judges are unsure about are drawn with higher probability, each with a known probability, so that
    estimates weighted by the inverse probability stay unbiased. One per cohort; raising ``budget``
    extends it. ``judges``: the names of the judges whose disagreement set each response's uncertainty."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="routing_designs")
    cohort = models.OneToOneField(Cohort, on_delete=models.CASCADE, related_name="routing_design")
    judges = models.JSONField(default=list)
    uniform_share = models.FloatField(default=0.2)
    seed = models.PositiveIntegerField(default=0)
    budget = models.PositiveIntegerField(default=0, help_text="Responses to label, in expectation, over all rounds.")
    rounds = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "cohort"]

    def __str__(self) -> str:
        return f"routing of {self.cohort} ({self.budget} responses)"


class RoutingDraw(models.Model):
    """One response of a routing design: its uncertainty (fixed when it entered the design), its current
    probability of being labelled, its uniform number (it is labelled once ``draw < probability``) and
    the round that chose it."""

    design = models.ForeignKey(RoutingDesign, on_delete=models.CASCADE, related_name="draws")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    uncertainty = models.FloatField()
    probability = models.FloatField()
    draw = models.FloatField()
    chosen_round = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["design", "response"]
        constraints = [models.UniqueConstraint(fields=["design", "response"], name="routing_draw_unique_response")]
