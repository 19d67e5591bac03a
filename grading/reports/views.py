"""The researchers' report pages (any role in the project: viewer, adjudicator, manager). Each view parses its query parameters,
reads the page's cached result — queuing its computation in a Celery task on a miss and
polling with htmx until it is there — and renders it with SVG charts; ``?format=csv&
table=NAME`` downloads any table of the page as CSV.
"""
import csv
import time

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify

from annotation.access import project_get_for
from annotation.models import Project
from evalsite.spreadsheet import csv_cell
from grading.sources import source_parse

from . import charts
from .cache import report_forget, report_key, report_mark_pending, report_peek, report_pending_since
from .coverage import sensitivity_parse
from .pages import PAGE_LABELS
from .scores import penalty_parse
from .services import strategy_name
from .subset import subset_parse
from .tasks import report_page_task

# A computation queued this long ago without a result may have lost its worker: offer a retry.
STUCK_SECONDS = 120
NAV = list(PAGE_LABELS.items())


def _source_param(request, project, name: str) -> str | None:
    text = request.GET.get(name) or None
    if text is not None:
        # Sources of this project only; naming another project's is an error that says nothing about it.
        text = source_parse(text=text, project=project, local_only=True).spec
    return text


def _ci_param(request) -> dict:
    """The "95% intervals" toggle of the pages whose means carry them (issue 14): only when on, so
    the default URL keeps the default cache entry."""
    return {"ci": True} if request.GET.get("ci") in ("1", "on", "true") else {}


def _page_result(project: Project, page: str, params: dict) -> tuple[dict | None, float | None]:
    """The page's cached result (or None while it is computed) and, while pending, how many
    seconds ago its computation was queued."""
    key = report_key(projects=[project], name=f"page:{page}", params=params)
    result = report_peek(key=key)
    if result is None and report_mark_pending(key=key):
        # Nothing was written, so there is no commit to wait for before queuing.
        report_page_task.delay(project_id=project.pk, page=page, params=params)
        result = report_peek(key=key)  # eager Celery (tests, small setups) has computed it already
    since = report_pending_since(key=key) if result is None else None
    return result, (time.time() - since) if since is not None else None


def _csv(result: dict, name: str, project: Project, page: str) -> HttpResponse:
    table = (result or {}).get("tables", {}).get(name)
    if table is None:
        raise Http404(f"no table {name!r} on this report (yet)")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{page}-{slugify(name)}.csv"'
    writer = csv.writer(response)
    writer.writerow([csv_cell(c) for c in table["columns"]])
    writer.writerows([csv_cell(v) for v in row] for row in table["rows"])  # text can never run as a formula
    return response


def _render(request, project: Project, page: str, parse, extra=None) -> HttpResponse:
    """Shared flow of the five pages: parse params, read or queue the result, render. A POST
    with ``retry`` forgets a failed (or stuck) computation and shows the page again, which
    queues it anew."""
    error, result, params, failed, waited = None, None, {}, False, None
    try:
        params = parse()
        subset = subset_parse(request.GET.get("models"), request.GET.get("exclude_models"))
        if subset is not None:  # every page: only some source models (issue 14)
            params["subset"] = subset.key()
    except (ValueError, LookupError) as exc:
        error = str(exc)
    if error is None and request.method == "POST" and request.POST.get("retry"):
        report_forget(key=report_key(projects=[project], name=f"page:{page}", params=params))
        return redirect(request.get_full_path())
    if error is None:
        result, waited = _page_result(project, page, params)
        if request.GET.get("format") == "csv":
            return _csv(result, request.GET.get("table", ""), project, page)
        if result is not None and "error" in result:
            error, failed, result = result["error"], bool(result.get("failed")), None
    query = request.GET.copy()
    for name in ("format", "table"):
        query.pop(name, None)
    context = {
        "project": project, "page": page, "nav": NAV, "params": params, "result": result, "error": error,
        "failed": failed, "pending": result is None and error is None, "query": query.urlencode(),
        "stuck": waited is not None and waited > STUCK_SECONDS,
        "charts": extra(result, project) if result is not None and extra else {},
    }
    template = f"grading/reports/{page}.html"
    return render(request, f"{template}#report" if request.htmx else template, context)


def _project(request, slug: str) -> Project:
    """The project, for a user whose role in it allows reading reports (404 / 403 otherwise)."""
    return project_get_for(user=request.user, action="view", slug=slug)


@login_required
def report_index(request, slug: str):
    project = _project(request, slug)
    return render(request, "grading/reports/index.html", {"project": project, "nav": NAV, "page": "reports"})


def _agreement_charts(result: dict, project: Project) -> dict:
    comparisons = result["comparisons"]
    out = {}
    if comparisons:
        n = sum(c["n_decisions"] for c in comparisons)
        out["mf1"] = charts.bar_chart(
            title=f"MF1 per comparison (n = {n:,} paired decisions over {len(comparisons)} comparisons)",
            labels=[f"{c['b']} vs {c['a']}" for c in comparisons], series=[("MF1", [c["mf1"] for c in comparisons])],
            reference=("human–human", result["reference_mf1"]) if result["reference_mf1"] is not None else None,
        )
    if result.get("histogram"):
        h = result["histogram"]
        out["histogram"] = charts.histogram(
            title=f"Case-level MF1 (n = {h['n']:,} (model, case) groups; {h['n_undefined']} undefined)",
            counts=h["counts"], edges=h["edges"], threshold=result["primary"]["threshold"],
        )
        by_model = result["primary"]["detail"]["by_model"]
        out["by_model"] = charts.bar_chart(
            title=f"MF1 per model, {result['primary']['b']} vs {result['primary']['a']} (n = {sum(v['n'] for v in by_model.values()):,})",
            labels=list(by_model), series=[("MF1", [v["mf1"] for v in by_model.values()])],
        )
    return out


@login_required
def agreement_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        a, b = _source_param(request, project, "a"), _source_param(request, project, "b")
        strategy = strategy_name(request.GET.get("strategy") or "zero")
        return {"a": a, "b": b, "strategy": strategy} if a and b else {"strategy": strategy}

    return _render(request, project, "agreement", parse, _agreement_charts)


def _coverage_charts(result: dict, project: Project) -> dict:
    if not result.get("by_model"):
        return {}
    models = list(result["by_model"])
    n = sum(v["n_responses"] for v in result["by_model"].values())
    return {"by_model": charts.bar_chart(
        title=f"Rubric accuracy vs CACS@{result['k']} per model, {result['source']} (n = {n:,} responses)",
        labels=models, max_value=100.0, digits=1,
        series=[("rubric accuracy %", [result["by_model"][m]["rubric_accuracy"] for m in models]),
                (f"CACS@{result['k']} %", [result["by_model"][m]["cacs"] for m in models])],
    )}


@login_required
def coverage_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        k = request.GET.get("k")
        if k not in (None, "") and not k.isdigit():
            raise ValueError(f"k must be a non-negative integer, not {k!r}")
        sensitivity = (request.GET.get("sensitivity") or "").strip() or None
        if sensitivity is not None:
            sensitivity = ",".join(map(str, sensitivity_parse(sensitivity)))  # a clear error, and one cache key per list
        return {"source": _source_param(request, project, "source"), "k": int(k) if k else None, "sensitivity": sensitivity,
                **_ci_param(request)}

    return _render(request, project, "coverage", parse, _coverage_charts)


def _judges_charts(result: dict, project: Project) -> dict:
    fidelity = result["fidelity"]
    if not fidelity:
        return {}
    return {"fidelity": charts.bar_chart(
        title=f"Judge fidelity: MF1 against each reference (n = {sum(r['n_decisions'] for r in fidelity):,} paired decisions)",
        labels=[f"{r['b']} vs {r['a']}" for r in fidelity],
        series=[("MF1", [r["mf1"] for r in fidelity]), ("Cohen's kappa", [r["cohen_kappa"] for r in fidelity])],
        reference=("human–human", result["reference_mf1"]) if result["reference_mf1"] is not None else None,
    )}


@login_required
def judges_report_page(request, slug: str):
    project = _project(request, slug)
    return _render(request, project, "judges",
                   lambda: {"strategy": strategy_name(request.GET.get("strategy") or "zero"), **_ci_param(request)},
                   _judges_charts)


def _bias_charts(result: dict, project: Project) -> dict:
    out = {}
    for condition, data in result["conditions"].items():
        models = data["judge_models"]
        highlight = {(i, data["targets"].index(models[j])) for i, j in enumerate(data["judges"]) if models[j] in data["targets"]}
        n = sum(map(sum, data["counts"]))
        unit = "points" if data["scale"] == "native" else "on [0, 1]"
        out[condition] = charts.heatmap(
            title=f"Consensus-deviation bias ± Monte Carlo σ, {condition}, {unit} (n = {n:,} decisions)",
            rows=data["judges"], columns=data["targets"], matrix=data["bias"], spread=data["sd"], highlight=highlight,
        )
        out[f"{condition}_scores"] = charts.heatmap(
            title=f"Mean score μ ± σ over samples, {condition}, {unit}", rows=data["judges"], columns=data["targets"],
            matrix=data["mu"], spread=data["sd"], highlight=highlight, diverging=False,
        )
        if "human_bias" in data:
            out[f"{condition}_human"] = charts.heatmap(
                title=f"Human–LLM bias vs {data['reference']} ({data['human']}), {condition}, {unit} (n = {n:,} decisions)",
                rows=data["judges"], columns=data["targets"], matrix=data["human_bias"], highlight=highlight,
            )
    return out


@login_required
def bias_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        scale, human = request.GET.get("scale") or "native", request.GET.get("human") or "mean"
        if scale not in ("native", "unit"):
            raise ValueError(f"unknown scale {scale!r}; use native or unit")
        if human not in ("mean", "decision"):
            raise ValueError(f"unknown human reference {human!r}; use mean or decision")
        criterion = (request.GET.get("criterion") or "all").strip()
        return {"reference": _source_param(request, project, "reference"), "scale": scale, "criterion": criterion,
                "human": human, **_ci_param(request)}

    return _render(request, project, "bias", parse, _bias_charts)


def _calibration_charts(result: dict, project: Project) -> dict:
    out = {}
    for stored in result.get("stored", []):
        dist, n = stored.get("distributions") or {}, max(1, stored.get("n_holdout") or 0)
        if dist:
            out[f"stored:{stored['source']}"] = charts.bar_chart(
                title=f"{stored['source']}: held-out score distributions, human ({stored.get('reference')}), raw and "
                      f"calibrated (n = {stored.get('n_holdout')} items)",
                labels=[f"{v:g}" for v in stored.get("levels", [])],
                series=[(name, [c / n for c in dist.get(name, [])]) for name in ("human", "raw", "calibrated")],
            )
    rows = [r for r in result.get("calibration", []) if r[5] is not None or r[6] is not None]
    if not rows:
        return out
    return {**out, "qwk": charts.bar_chart(
        title=f"QWK against {result['reference']} on held-out responses, before and after quantile mapping "
              f"(n = {sum(r[4] or 0 for r in rows):,} held-out responses)",
        labels=[r[0] for r in rows], series=[("raw", [r[5] for r in rows]), ("calibrated", [r[6] for r in rows])],
    )}


@login_required
def calibration_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        return {"reference": _source_param(request, project, "reference"),
                "strategy": strategy_name(request.GET.get("strategy") or "skip")}

    return _render(request, project, "calibration", parse, _calibration_charts)


def _traits_charts(result: dict, project: Project) -> dict:
    out = {}
    for trait, dist in (result.get("distributions") or {}).items():
        n_a, n_b = sum(dist["source"]) or 1, sum(dist["reference"]) or 1
        series = [(result["source"], [c / n_a for c in dist["source"]])]
        if result.get("reference"):
            series.append((result["reference"], [c / n_b for c in dist["reference"]]))
        out[trait] = charts.bar_chart(
            title=f"Trait {trait}: share of responses per score (n = {sum(dist['source'])} and {sum(dist['reference'])})",
            labels=[str(v) for v in dist["scale"]], series=series,
        )
    return out


@login_required
def traits_report_page(request, slug: str):
    project = _project(request, slug)
    def parse():
        none = request.GET.get("reference") == "none"  # no reference asked for (the default is the first cohort)
        return {"source": _source_param(request, project, "source"),
                "reference": "none" if none else _source_param(request, project, "reference"), **_ci_param(request)}

    return _render(request, project, "traits", parse, _traits_charts)


@login_required
def reliability_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        by = request.GET.get("by") or "criterion"
        if by not in ("criterion", "tag", "model"):
            raise ValueError(f"unknown grouping {by!r}; use criterion, tag or model")
        return {"a": _source_param(request, project, "a"), "b": _source_param(request, project, "b"), "by": by,
                **_ci_param(request)}

    return _render(request, project, "reliability", parse)


@login_required
def scores_report_page(request, slug: str):
    project = _project(request, slug)

    def parse():
        penalty = (request.GET.get("length_penalty") or "").strip() or None
        unit = request.GET.get("length_unit") or "words"
        penalty_parse(penalty, unit)  # a clear error now, not in the worker
        return {"source": _source_param(request, project, "source"),
                "strategy": strategy_name(request.GET.get("strategy") or "skip"), "length_penalty": penalty,
                "length_unit": unit, **_ci_param(request)}

    return _render(request, project, "scores", parse)
