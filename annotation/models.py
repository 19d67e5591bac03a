"""The human side of a study (SPEC §2): projects, cases, rubric versions, criteria,
responses, cohorts and their members, assignments, labels and the labels' history.

External ids from bundles (``case_id``, ``criterion_id``, ``response_id``) are kept as
``external_id`` and are unique within a project; they are the keys of import and export.
"""
from django.conf import settings
from django.db import models


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    blind = models.BooleanField(default=True, help_text="Hide the source model from annotators.")
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Annotators per item within a cohort.")
    coverage_k = models.PositiveSmallIntegerField(null=True, blank=True)
    low_agreement_threshold = models.FloatField(default=0.6)
    show_reference_answer = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


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
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    checked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

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
    """One human decision for (response, criterion) by one annotator or checker."""

    MET, NOT_MET, CANNOT_ASSESS = "met", "not_met", "cannot_assess"
    VERDICTS = [(MET, "met"), (NOT_MET, "not met"), (CANNOT_ASSESS, "cannot assess")]

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
        ]
        indexes = [models.Index(fields=["project", "cohort"])]

    def __str__(self) -> str:
        return f"{self.response}/{self.criterion} by {self.annotator}: {self.verdict or self.option_label or self.value}"


class LabelHistory(models.Model):
    """Append-only record of every change to a label: who, when, old state, new state."""

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="history")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=20)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField()
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["label", "changed_at", "id"]
        verbose_name_plural = "label history"

    def __str__(self) -> str:
        return f"{self.action} {self.label_id} at {self.changed_at:%Y-%m-%d %H:%M:%S}"
