"""Decision sources named on the command line and in report URLs (SPEC §2, §5):
``cohort:NAME``, ``judge:NAME`` or ``gold``, optionally prefixed by another project's
slug (``other-study:cohort:group-2``) to compare with a separately imported copy of the
same study, whose rows are then aligned by text (SPEC §3 "Alignment of two cohorts").

Parsing raises ``LookupError`` / ``ValueError`` with one line saying what is wrong, which
``JsonCommand`` turns into a one-line error and exit status 1.
"""
from dataclasses import dataclass

from annotation.models import Cohort, Project

from .models import Judge

KINDS = ("cohort", "judge", "gold")


@dataclass(frozen=True)
class Source:
    """A resolved decision source; ``obj`` is the Cohort or Judge (None for gold)."""

    project: Project
    kind: str
    name: str
    obj: Cohort | Judge | None = None
    foreign: bool = False

    @property
    def spec(self) -> str:
        """The text that names this source (with the project prefix when foreign)."""
        local = "gold" if self.kind == "gold" else f"{self.kind}:{self.name}"
        return f"{self.project.slug}:{local}" if self.foreign else local

    @property
    def label(self) -> str:
        return self.spec


def project_get(*, slug: str) -> Project:
    """The project with this slug, or a LookupError naming it."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise LookupError(f"unknown project {slug!r}")
    return project


def source_parse(*, text: str, project: Project, local_only: bool = False) -> Source:
    """Resolve ``text`` to a Source of ``project`` (or of the project its prefix names).

    ``local_only`` (pages and the API, whose users have a role in ``project`` only): a prefix
    is refused before any other project is looked up, with the same words whether that project
    exists or not, so that an error never names another project's slugs, cohorts or judges."""
    text = (text or "").strip()
    if not text:
        raise ValueError("empty source; use cohort:NAME, judge:NAME or gold")
    head, _, rest = text.partition(":")
    foreign = False
    if head not in KINDS:
        if not rest or local_only:
            raise ValueError(f"unknown source {text!r}; use cohort:NAME, judge:NAME or gold")
        project = project_get(slug=head)
        foreign = True
        text = rest
        head, _, rest = text.partition(":")
    if head == "gold":
        if rest:
            raise ValueError(f"unknown source {text!r}; 'gold' takes no name")
        return Source(project=project, kind="gold", name="gold", foreign=foreign)
    if head not in KINDS or not rest:
        raise ValueError(f"unknown source {text!r}; use cohort:NAME, judge:NAME or gold")
    if head == "cohort":
        cohort = Cohort.objects.filter(project=project, name=rest).first()
        if cohort is None:
            names = ", ".join(Cohort.objects.filter(project=project).values_list("name", flat=True)) or "none"
            raise LookupError(f"unknown cohort {rest!r} in project {project.slug!r} (cohorts: {names})")
        return Source(project=project, kind="cohort", name=rest, obj=cohort, foreign=foreign)
    judge = Judge.objects.filter(project=project, name=rest).first()
    if judge is None:
        names = ", ".join(Judge.objects.filter(project=project).values_list("name", flat=True)) or "none"
        raise LookupError(f"unknown judge {rest!r} in project {project.slug!r} (judges: {names})")
    return Source(project=project, kind="judge", name=rest, obj=judge, foreign=foreign)


def project_sources(*, project: Project) -> dict[str, list[Source]]:
    """Every source of a project: cohorts in order, judges by name, and gold."""
    cohorts = [Source(project=project, kind="cohort", name=c.name, obj=c) for c in Cohort.objects.filter(project=project)]
    judges = [Source(project=project, kind="judge", name=j.name, obj=j) for j in Judge.objects.filter(project=project)]
    return {"cohorts": cohorts, "judges": judges, "gold": [Source(project=project, kind="gold", name="gold")]}
