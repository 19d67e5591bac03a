"""Report services: parse the sources a report names, compute its result from the
project's decision frames with ``grading.metrics``, and cache it (``cache``). The
management commands of SPEC §5 and the report pages both call these functions, so a
command run also warms the pages' cache.

Every function takes the project slug and source texts as given on the command line and
raises ``LookupError`` / ``ValueError`` with one line for an unknown project or source.
The computing modules (and with them scikit-learn, scipy and krippendorff) are imported
only on a cache miss, so a cached answer costs a Django start and a few index lookups.
"""
from collections.abc import Callable

from annotation.models import Project
from grading.sources import Source, project_get, source_parse

from .cache import report_cached
from .inputs import ReportInputs
from .subset import subset_summary

STRATEGIES = ("skip", "zero", "partial", "fail")
LEVELS = ("nominal", "ordinal", "interval")
CONDITIONS = ("attributed", "anonymized")


def strategy_name(strategy: str) -> str:
    """The canonical cannot-assess strategy name (``metrics.parse_strategy`` accepts the same)."""
    name = str(strategy).strip().lower()
    if name not in STRATEGIES:
        raise ValueError(f"unknown cannot-assess strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    return name


def _projects(project: Project, *sources: Source | None) -> list[Project]:
    projects = {project.pk: project}
    for source in sources:
        if source is not None:
            projects.setdefault(source.project.pk, source.project)
    return [projects[pk] for pk in sorted(projects)]


def _counted(inputs: ReportInputs, compute: Callable[[], dict]) -> Callable[[], dict]:
    """``compute`` whose result also says how many cases quality control left out of it, how many
    draft labels it did not count and,
    under a model subset, which models it was asked for and used (``model_subset``)."""
    def counted() -> dict:
        result = {**compute(), "n_excluded_cases": inputs.n_excluded_cases, "n_draft_labels": inputs.n_draft_labels}
        if inputs.subset is not None:
            result["model_subset"] = subset_summary(inputs.subset, inputs.all_models)
        return result

    return counted


def report_project(*, slug: str | Project) -> Project:
    return slug if isinstance(slug, Project) else project_get(slug=slug)


def agreement_report(*, project, a: str, b: str, strategy: str = "zero", inputs: ReportInputs | None = None,
                     ci: bool = False) -> dict:
    """Agreement of source ``b`` with reference source ``a`` (result of ``agreement.agreement_compute``)."""
    project = report_project(slug=project)
    sa, sb = source_parse(text=a, project=project), source_parse(text=b, project=project)
    strategy = strategy_name(strategy)
    inputs = inputs or ReportInputs(project)
    from . import agreement

    return report_cached(
        projects=_projects(project, sa, sb), name="agreement",
        params={"a": sa.spec, "b": sb.spec, "a_project": sa.project.slug, "b_project": sb.project.slug, "strategy": strategy,
                **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: agreement.agreement_compute(inputs=inputs, a=sa, b=sb, strategy=strategy, ci=ci)),
    )


def agreement_pairs_report(*, project, a: str, b: str, strategy: str = "zero") -> list[dict]:
    """The paired decisions behind ``agreement_report`` (not cached: an audit file, computed on request)."""
    project = report_project(slug=project)
    sa, sb = source_parse(text=a, project=project), source_parse(text=b, project=project)
    from . import agreement

    return agreement.agreement_pairs(inputs=ReportInputs(project), a=sa, b=sb, strategy=strategy_name(strategy))


def reliability_report(*, project, source: str, level: str = "nominal", inputs: ReportInputs | None = None,
                       ci: bool = False) -> dict:
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    inputs = inputs or ReportInputs(project)
    from . import reliability

    return report_cached(
        projects=_projects(project, src), name="reliability",
        params={"source": src.spec, "p": src.project.slug, "level": level, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: reliability.reliability_compute(inputs=inputs, source=src, level=level, ci=ci)),
    )


def coverage_report(*, project, source: str, k: int | None = None, inputs: ReportInputs | None = None,
                    sensitivity: str | None = None, ci: bool = False) -> dict:
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    inputs = (inputs or ReportInputs(project)).for_source(src)
    from . import coverage

    ks = coverage.sensitivity_parse(sensitivity)
    return report_cached(
        projects=_projects(src.project), name="coverage",
        params={"source": src.spec, "p": src.project.slug, "k": k, "sensitivity": list(ks), "ci": ci},
        compute=_counted(inputs, lambda: coverage.coverage_compute(inputs=inputs, source=src, k=k, sensitivity=ks, ci=ci)),
    )


def calibrate_k_report(*, project, source: str, inputs: ReportInputs | None = None, ci: bool = False) -> dict:
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    inputs = (inputs or ReportInputs(project)).for_source(src)
    from . import coverage

    return report_cached(
        projects=_projects(src.project), name="calibrate_k",
        params={"source": src.spec, "p": src.project.slug, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: coverage.calibrate_k_compute(inputs=inputs, source=src, ci=ci)),
    )


def scores_report(*, project, source: str, strategy: str = "skip", inputs: ReportInputs | None = None,
                  ci: bool = False, length_penalty: str | None = None, length_unit: str = "words") -> dict:
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    strategy = strategy_name(strategy)
    inputs = (inputs or ReportInputs(project)).for_source(src)
    from . import scores

    penalty = scores.penalty_parse(length_penalty, length_unit)
    return report_cached(
        projects=_projects(src.project), name="scores",
        params={"source": src.spec, "p": src.project.slug, "strategy": strategy, **({"ci": True} if ci else {}),
                **({"penalty": length_penalty, "unit": length_unit} if penalty else {})},
        compute=_counted(inputs, lambda: scores.scores_compute(inputs=inputs, source=src, strategy=strategy, ci=ci,
                                                               penalty=penalty)),
    )


def bias_report(*, project, condition: str, reference: str | None = None, inputs: ReportInputs | None = None,
                scale: str = "native", criterion: str = "all", human: str = "mean", ci: bool = False) -> dict:
    project = report_project(slug=project)
    ref = source_parse(text=reference, project=project) if reference else None
    if ref is not None and ref.project.pk != project.pk:
        raise ValueError("the bias reference must be a source of the same project")
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; use attributed or anonymized")
    from . import bias

    if scale not in bias.SCALES:
        raise ValueError(f"unknown scale {scale!r}; use native or unit")
    if human not in bias.HUMAN_REFERENCES:
        raise ValueError(f"unknown human reference {human!r}; use mean or decision")
    inputs = inputs or ReportInputs(project)
    params = {"condition": condition, "reference": ref.spec if ref else None, "scale": scale, "criterion": criterion,
              "human": human, **({"ci": True} if ci else {})}
    return report_cached(
        projects=[project], name="bias", params=params,
        compute=_counted(inputs, lambda: bias.bias_compute(inputs=inputs, condition=condition, reference=ref, scale=scale,
                                                          criterion=criterion, human=human, ci=ci)),
    )


def stability_report(*, project, judge: str, inputs: ReportInputs | None = None, ci: bool = False) -> dict:
    """Monte Carlo stability of one judge (result of ``stability.stability_compute``)."""
    project = report_project(slug=project)
    source = source_parse(text=f"judge:{judge}", project=project)
    inputs = inputs or ReportInputs(project)
    from . import stability

    return report_cached(
        projects=[project], name="stability", params={"judge": source.name, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: stability.stability_compute(inputs=inputs, judge=source.obj, ci=ci)),
    )


def trait_scores_report(*, project, source: str, reference: str | None = None, inputs: ReportInputs | None = None,
                        ci: bool = False) -> dict:
    """Trait scores of RULERS compiled rubrics under ``source``; with ``reference``, QWK per trait
    (result of ``traits.trait_scores_compute``)."""
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    ref = source_parse(text=reference, project=project) if reference else None
    inputs = inputs or ReportInputs(project)
    from . import traits

    return report_cached(
        projects=_projects(project, src, ref), name="trait_scores",
        params={"source": src.spec, "reference": ref.spec if ref else None, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: traits.trait_scores_compute(inputs=inputs, source=src, reference=ref, ci=ci)),
    )


def calibrate_run(*, project, source: str, reference: str, criterion: str | None = None,
                  calibration_size: int | None = None, seed: int = 0, ci: bool = False) -> dict:
    """Calibrate a judge against a reference and store ``judge:NAME@calibrated`` (result of
    ``calibrated.calibrate_compute``). Not cached: it writes."""
    project = report_project(slug=project)
    src, ref = source_parse(text=source, project=project), source_parse(text=reference, project=project)
    if calibration_size is not None and calibration_size < 1:
        raise ValueError("the calibration size must be at least 1")
    from . import calibrated

    inputs = ReportInputs(project)
    return {**calibrated.calibrate_compute(inputs=inputs, source=src, reference=ref, criterion=criterion,
                                           calibration_size=calibration_size, seed=seed, ci=ci),
            "n_excluded_cases": inputs.n_excluded_cases, "n_draft_labels": inputs.n_draft_labels}


def reliability_ab_report(*, project, a: str, b: str, by: str | None = None, inputs: ReportInputs | None = None,
                          ci: bool = False) -> dict:
    """The reliability report of two sources, pooled and per group (result of
    ``reliability_report.reliability_report_compute``)."""
    project = report_project(slug=project)
    sa, sb = source_parse(text=a, project=project), source_parse(text=b, project=project)
    inputs = inputs or ReportInputs(project)
    from . import reliability_report

    return report_cached(
        projects=_projects(project, sa, sb), name="reliability_report",
        params={"a": sa.spec, "b": sb.spec, "by": by, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: reliability_report.reliability_report_compute(inputs=inputs, a=sa, b=sb, by=by,
                                                                                     ci=ci)),
    )


def pairwise_report(*, project, source: str, grader: str | None = None, by: str | None = None, min_n: int = 50,
                    inputs: ReportInputs | None = None, ci: bool = False) -> dict:
    """HealthBench's pairwise protocol on a cohort (result of ``pairwise.pairwise_compute``)."""
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    grd = source_parse(text=grader, project=project) if grader else None
    if min_n < 0:
        raise ValueError("--min-n must be 0 or more")
    inputs = inputs or ReportInputs(project)
    from . import pairwise

    return report_cached(
        projects=_projects(project, src, grd), name="pairwise",
        params={"source": src.spec, "grader": grd.spec if grd else None, "by": by, "min_n": min_n, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: pairwise.pairwise_compute(inputs=inputs, source=src, grader=grd, by=by, min_n=min_n,
                                                                   ci=ci)),
    )


def cross_grader_report(*, project, a: str, b: str, inputs: ReportInputs | None = None, ci: bool = False) -> dict:
    """Cross-grader robustness of two sources (result of ``diagnostics.cross_grader_compute``)."""
    project = report_project(slug=project)
    sa, sb = source_parse(text=a, project=project), source_parse(text=b, project=project)
    inputs = inputs or ReportInputs(project)
    from . import diagnostics

    return report_cached(
        projects=_projects(project, sa, sb), name="cross_grader",
        params={"a": sa.spec, "b": sb.spec, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: diagnostics.cross_grader_compute(inputs=inputs, a=sa, b=sb, ci=ci)),
    )


def verbosity_report(*, project, source: str, k: int | None = None, inputs: ReportInputs | None = None,
                     ci: bool = False) -> dict:
    """The verbosity check of one source (result of ``diagnostics.verbosity_compute``)."""
    project = report_project(slug=project)
    src = source_parse(text=source, project=project)
    inputs = (inputs or ReportInputs(project)).for_source(src)
    from . import diagnostics

    return report_cached(
        projects=_projects(src.project), name="verbosity", params={"source": src.spec, "k": k, **({"ci": True} if ci else {})},
        compute=_counted(inputs, lambda: diagnostics.verbosity_compute(inputs=inputs, source=src, k=k, ci=ci)),
    )
