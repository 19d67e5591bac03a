"""The human side of a study (SPEC §2): projects, cases, rubric versions, criteria,
responses, cohorts and their members, assignments, labels and the labels' history.

External ids from bundles (``case_id``, ``criterion_id``, ``response_id``) are kept as
``external_id`` and are unique within a project; they are the keys of import and export.
"""
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from .vocabulary import VERDICT_CHOICES


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    blind = models.BooleanField(default=True, help_text="Hide the source model from annotators.")
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Annotators per item within a cohort.")
    coverage_k = models.PositiveSmallIntegerField(null=True, blank=True)
    low_agreement_threshold = models.FloatField(default=0.6)
    show_reference_answer = models.BooleanField(default=False)
    guidelines = models.TextField(blank=True, default="", db_default="",
                                  help_text="Instructions for annotators (Markdown, sanitized when shown).")
    hide_rater_names = models.BooleanField(
        default=False, help_text="Adjudicators see 'annotator 1', 'annotator 2' instead of user names.",
    )
    traits = models.JSONField(
        default=list, blank=True,
        help_text='RULERS evidence rules of traits: [{"trait": CRITERION_ID, "min_evidence": m, "gate": τ}].',
    )
    stratum_groups = models.JSONField(
        default=dict, blank=True,
        help_text='Groups of strata for the coverage heatmaps: {"task_themes": {"FAMILY": [THEME, ...]}, '
                  '"specialties": {"MACRO-CATEGORY": [SPECIALTY, ...]}}; a value in no group is shown as itself.',
    )
    # Annotator quality (issue 28): hidden check items drawn from gold, seeded into annotators' queues.
    CHECK_RATE_MAX = 0.5  # check items stay a minority of anybody's work
    check_rate = models.FloatField(
        default=0.0, db_default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(CHECK_RATE_MAX)],
        help_text="Share of each annotator's queue made of hidden check items (responses with gold decisions); 0 = off.")
    check_alert_threshold = models.FloatField(
        default=0.7, db_default=0.7, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="An annotator whose agreement with gold (overall or over the rolling window) falls below this is flagged.")
    check_min_items = models.PositiveSmallIntegerField(
        default=10, db_default=10, validators=[MinValueValidator(1)],
        help_text="Submitted check items an annotator needs before an alert can fire.")
    check_window = models.PositiveSmallIntegerField(
        default=20, db_default=20, validators=[MinValueValidator(1)],
        help_text="Check items in the rolling window that tracks drift (submission order).")
    check_feedback = models.BooleanField(
        default=False, db_default=False,
        help_text="Annotators may see their own agreement with reference answers (never which items were checks).")
    created_at = models.DateTimeField(auto_now_add=True)
    data_changed_at = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="Last admin edit of the project's data; part of the report cache key (see grading.selectors.fingerprint).",
    )

    # URL segments under /projects/ that are not a project: a project of that slug could not be reached.
    RESERVED_SLUGS = frozenset({"import"})

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self):
        super().clean()
        if self.slug in self.RESERVED_SLUGS:
            raise ValidationError({"slug": f"slug {self.slug!r} is reserved (a page of the site has that address)"})


class Case(models.Model):
    DIFFICULTIES = [("low", "low"), ("medium", "medium"), ("high", "high")]
    REGISTERS = [("lay", "lay"), ("professional", "professional")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="cases")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    prompt = models.TextField(blank=True)
    messages = models.JSONField(null=True, blank=True)
    reference_answer = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Copied out of metadata so that admin filters and strata need no JSON queries.
    difficulty = models.CharField(max_length=10, choices=DIFFICULTIES, blank=True)
    register = models.CharField(max_length=20, choices=REGISTERS, blank=True)
    # The rubric the case's responses are judged against: the case's own current version, else
    # the project's. Set only by ``rubrics.rubrics_freeze``, so "the criteria of this response"
    # is one join and no reader re-derives the rule.
    rubric_version = models.ForeignKey(
        "RubricVersion", on_delete=models.SET_NULL, null=True, blank=True, editable=False, related_name="judged_cases",
    )

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="case_unique_external_id"),
        ]

    def __str__(self) -> str:
        return self.external_id


class RubricVersion(models.Model):
    """A frozen rubric: the canonical JSON of its criteria and that JSON's sha256.

    ``case`` is null for the project-wide rubric. Labels and judgments point at the
    version they were made against, so editing a rubric never rewrites old decisions.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rubric_versions")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, null=True, blank=True, related_name="rubric_versions")
    content_hash = models.CharField(max_length=64)
    content = models.JSONField()
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "case", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "case", "content_hash"], name="rubric_version_unique_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.case or self.project} @ {self.content_hash[:12]}"


class Criterion(models.Model):
    BINARY, ORDINAL, NOMINAL = "binary", "ordinal", "nominal"
    KINDS = [(BINARY, "binary"), (ORDINAL, "ordinal"), (NOMINAL, "nominal")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="criteria")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, null=True, blank=True, related_name="criteria")
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.RESTRICT, related_name="criteria")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    text = models.TextField()
    kind = models.CharField(max_length=10, choices=KINDS, default=BINARY)
    weight = models.FloatField(default=1.0, help_text="Negative weight = penalty criterion.")
    options = models.JSONField(default=list, blank=True, help_text='[{"label", "value", "na"}]')
    tags = models.JSONField(default=list, blank=True)
    min_evidence = models.PositiveSmallIntegerField(default=0)
    checklist_of = models.CharField(
        max_length=200, blank=True, default="", db_default="",
        help_text="RULERS compiled rubric: the trait (an ordinal criterion of the same rubric) this checklist item "
                  "belongs to; its options are 0 / 1 / 2 (not present / partially / clearly).",
    )
    variants = models.JSONField(
        default=dict, blank=True,
        help_text='Alternative texts for rubric-perturbation runs, e.g. {"paraphrased": "..."}. Not part of the rubric version.',
    )
    guidance = models.TextField(blank=True, default="", db_default="",
                                help_text="How to apply the criterion, for annotators (Markdown). Not part of the "
                                          "rubric version: editing it changes no criterion's meaning.")

    class Meta:
        ordering = ["project", "case", "position"]
        verbose_name_plural = "criteria"
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="criterion_unique_external_id"),
        ]

    def __str__(self) -> str:
        return self.external_id

    def option_by_label(self, label: str) -> dict | None:
        return next((o for o in self.options if o["label"] == label), None)


class Response(models.Model):
    MODEL, HUMAN = "model", "human"
    AUTHOR_KINDS = [(MODEL, "model"), (HUMAN, "human")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="responses")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="responses")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, help_text="Source model name, or the human author's label.")
    author_kind = models.CharField(max_length=10, choices=AUTHOR_KINDS, default=MODEL)
    text = models.TextField()

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="response_unique_external_id"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Cohort(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="cohorts")
    name = models.CharField(max_length=100)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["project", "position", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="cohort_unique_name")]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.name}"


class CohortMembership(models.Model):
    ANNOTATOR, CHECKER = "annotator", "checker"
    ROLES = [(ANNOTATOR, "annotator"), (CHECKER, "checker")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=ANNOTATOR)

    class Meta:
        ordering = ["cohort", "role", "user__username"]
        constraints = [
            # One cohort per user per project: independence of the cohorts depends on it.
            models.UniqueConstraint(fields=["project", "user"], name="membership_one_cohort_per_project"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.cohort} ({self.role})"


class Assignment(models.Model):
    OPEN, IN_PROGRESS, SUBMITTED, CHECKED = "open", "in_progress", "submitted", "checked"
    STATUSES = [(OPEN, "open"), (IN_PROGRESS, "in progress"), (SUBMITTED, "submitted"), (CHECKED, "checked")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="assignments")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=12, choices=STATUSES, default=OPEN)
    position = models.PositiveIntegerField(default=0)
    active_seconds = models.FloatField(default=0.0, help_text="Time with the page visible and in use.")
    time_reported_at = models.DateTimeField(
        null=True, blank=True, help_text="When active time was last reported: the next report may add at most the time since.")
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    checked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The last reopening: why (required; the annotator is shown it), by whom, when.
    reopen_reason = models.TextField(blank=True, default="", db_default="")
    reopened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reopened_at = models.DateTimeField(null=True, blank=True)
    # A hidden gold check item (issue 28): set only by the seeding service, never shown to the annotator;
    # its labels are neither final nor drafts (``selectors.final``) and no checker reviews it.
    is_check = models.BooleanField(default=False, db_default=False, editable=False)

    class Meta:
        ordering = ["project", "annotator", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["response", "annotator"], name="assignment_unique_annotator_item"),
        ]
        indexes = [models.Index(fields=["annotator", "status"])]

    def __str__(self) -> str:
        return f"{self.response} -> {self.annotator} ({self.status})"


class ImportBatch(models.Model):
    """One bundle import that wrote something: who, when, which bundle, what it wrote."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_batches")
    bundle_sha256 = models.CharField(max_length=64)
    source = models.CharField(max_length=500, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"


class Label(models.Model):
    """One human decision for (response, criterion): an annotator's own, or the cohort's checker
    label. A checker label belongs to (response, criterion, cohort), whichever checker of the
    cohort recorded it last (``annotator``); it points at no assignment."""

    VERDICTS = VERDICT_CHOICES  # the vocabulary's names and words (annotation.vocabulary)
    ANNOTATOR_ROLE, CHECKER_ROLE = "annotator", "checker"

    # Indexes are kept to those queries need: the (project, cohort) index covers project and
    # cohort, the unique (response, criterion, annotator) constraint covers response; every
    # extra index costs a bulk import of 165,000 labels about a tenth of its time.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="labels", db_index=False)
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="labels", db_index=False)
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="labels")
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.RESTRICT, related_name="labels", db_index=False)
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="labels", db_index=False)
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="labels")
    role = models.CharField(max_length=10, choices=CohortMembership.ROLES, default=CohortMembership.ANNOTATOR)
    assignment = models.ForeignKey(Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="labels")
    import_batch = models.ForeignKey(
        ImportBatch, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    verdict = models.CharField(max_length=14, choices=VERDICTS, null=True, blank=True)
    option_label = models.CharField(max_length=200, null=True, blank=True)
    value = models.FloatField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    evidence = models.JSONField(default=list, blank=True)
    time_spent_seconds = models.FloatField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=1, help_text="Bumped on every change; guards concurrent edits.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["response", "criterion", "cohort", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["response", "criterion", "annotator"], name="label_unique_decision"),
            models.UniqueConstraint(
                fields=["response", "criterion", "cohort"], condition=models.Q(role="checker"),
                name="label_unique_checker_decision",
            ),
        ]
        indexes = [models.Index(fields=["project", "cohort"])]

    def __str__(self) -> str:
        return f"{self.response}/{self.criterion} by {self.annotator}: {self.verdict or self.option_label or self.value}"


class LabelHistory(models.Model):
    """Append-only record of every change to a label: who, when, old state, new state. Deleting a
    label keeps its history (and appends a "delete" row with its last state): ``label`` is a plain
    reference with no cascade and no database constraint, so it still names the deleted label."""

    # The actions a history row may record besides the write services' own (annotate, review, ...):
    # a deletion (``new`` None, ``old`` names the response) and a bundle import.
    DELETE, IMPORT = "delete", "import"

    label = models.ForeignKey(Label, on_delete=models.DO_NOTHING, db_constraint=False, null=True,
                              related_name="history")
    # The label's project, copied so that a project's newest change is one index lookup.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    # No index: nothing looks history up by who made it (only a user's deletion clears it), and a
    # bundle import writes one row per label, millions at full scale, each an entry of every index.
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=20)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)  # None: the label was deleted
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["label", "changed_at", "id"]
        verbose_name_plural = "label history"
        # (project, id): a project's newest change; (project, changed_at) of every row but an
        # import's: its changes of the last minutes (``grading.selectors.fingerprint.responses_changed``),
        # which an import's millions of rows, left out there, would bury (and an import writes no entry).
        indexes = [models.Index(fields=["project", "id"], name="labelhistory_project_id"),
                   models.Index(fields=["project", "changed_at"], name="labelhistory_project_time",
                                condition=~models.Q(action="import"))]

    def __str__(self) -> str:
        return f"{self.action} {self.label_id} at {self.changed_at:%Y-%m-%d %H:%M:%S}"


class ProjectRole(models.Model):
    """A user's role in a project (annotators and checkers are cohort members instead).

    manager: import, cohorts, assignments, judges and runs, exports, roles; adjudicator: the
    adjudication queue and decisions, reports, side-by-side pages, gold export; viewer: reports.
    What each role may do is decided in one place, ``annotation.access``."""

    MANAGER, ADJUDICATOR, VIEWER = "manager", "adjudicator", "viewer"
    ROLES = [(MANAGER, "manager"), (ADJUDICATOR, "adjudicator"), (VIEWER, "viewer")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="roles")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_roles")
    role = models.CharField(max_length=12, choices=ROLES)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "role", "user__username"]
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="project_role_one_per_user")]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.project}"


class AuditEvent(models.Model):
    """Append-only record of a change to a project that is not a label (labels have their own
    history): settings, roles, quality control, imports... who, when, what, before and after."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="audit_events", null=True, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    action = models.CharField(max_length=60)
    target = models.CharField(max_length=300, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="auditevent_project_time")]

    def __str__(self) -> str:
        return f"{self.action} {self.target} by {self.actor} at {self.created_at:%Y-%m-%d %H:%M}"


class CaseQuality(models.Model):
    """Quality control of one case (ClinConsensus §3.4): the screening result (a case that the
    screening responses already cover well is flagged for exclusion) and the senior audit of a
    seeded sample of the rest (pass / revise / remove). An excluded case drops out of every
    report and of the export."""

    PASS, REVISE, REMOVE = "pass", "revise", "remove"
    OUTCOMES = [(PASS, "pass"), (REVISE, "revise"), (REMOVE, "remove")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="case_quality")
    case = models.OneToOneField(Case, on_delete=models.CASCADE, related_name="quality")
    screen_accuracy_pct = models.FloatField(null=True, blank=True)
    screen_threshold_pct = models.FloatField(null=True, blank=True)
    screen_source = models.CharField(max_length=300, blank=True)
    screen_models = models.JSONField(default=list, blank=True)
    flagged = models.BooleanField(default=False, help_text="Screening: mean rubric accuracy at or above the threshold.")
    audit_sampled = models.BooleanField(default=False)
    audit_outcome = models.CharField(max_length=8, choices=OUTCOMES, blank=True)
    audit_note = models.TextField(blank=True)
    audit_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    audit_at = models.DateTimeField(null=True, blank=True)
    excluded = models.BooleanField(default=False, help_text="Left out of reports and export (flagged or removed).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "case"]
        verbose_name_plural = "case quality"
        indexes = [models.Index(fields=["project", "excluded"], name="casequality_project_excluded")]

    def __str__(self) -> str:
        return f"{self.case}: {'excluded' if self.excluded else 'kept'}"
