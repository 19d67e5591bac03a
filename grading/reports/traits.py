"""Trait scores of RULERS compiled rubrics under one source (SPEC §3 "Trait score"; the
``trait_scores`` command; issue 13, point 3), and their quadratic-weighted kappa against a
reference source.

The traits of a project are the ordinal criteria that checklist items name (``checklist_of``,
inside one rubric version); the evidence rules come from the project's ``traits``. A source's
item decisions for a response are combined first: a judge sample by sample (its outputs, missing
ones counted as its decisions count them, ``selectors.judge_sample_outputs``), each sample scored
with the quotes of that sample and the samples' scores averaged and rounded half up; any other
source by its decision per item, with the quotes of the labels behind it (a cohort's; every
cohort's for gold) or of its members' judgments (a panel). A quote is valid when it is verbatim
in the response (``judges.parsing.evidence_valid_quotes``; a compiled judge's quotes were checked
against their sentence when it answered, see ``judges.compiled``). A response whose source decided
none of a trait's items but the trait itself has that decision's value as its score.
"""
from collections import defaultdict

import numpy as np
import pandas as pd

from annotation.models import Response
from grading import metrics
from grading.judges.parsing import evidence_valid_quotes
from grading.selectors import evidence_rows, judge_sample_outputs, panel_members
from grading.sources import project_sources, source_parse

from . import charts
from .inputs import ReportInputs, as_number, interval_pair, interval_text
from .registry import Flag, Page, Params, Report, ReportUnavailable, SourceField, register
from .scores import decision_values


class Traits:
    """The traits of a project: trait pk → (external id, lo, hi, item pks, rule)."""

    def __init__(self, inputs: ReportInputs, *, only: int | None = None):
        """``only``: that trait alone."""
        criteria = inputs.criteria
        items = criteria[criteria["checklist_of"].astype(str) != ""]
        by_version = {(v, ext): pk for pk, v, ext in zip(criteria.index, criteria["rubric_version_id"],
                                                         criteria["criterion_external_id"])}
        rules = {r["trait"]: r for r in (inputs.project.traits or [])}
        self.items: dict[int, list[int]] = defaultdict(list)
        for pk, version, trait in zip(items.index, items["rubric_version_id"], items["checklist_of"]):
            trait_pk = by_version.get((version, trait))
            if trait_pk is not None and only in (None, trait_pk):
                self.items[int(trait_pk)].append(int(pk))
        self.info = {}
        for trait_pk in self.items:
            ext = str(criteria.at[trait_pk, "criterion_external_id"])
            self.info[trait_pk] = {"id": ext, "lo": float(criteria.at[trait_pk, "min_value"]),
                                   "hi": float(criteria.at[trait_pk, "max_value"]), "rule": rules.get(ext, {})}
        self.item_trait = {item: trait for trait, listed in self.items.items() for item in listed}

    def criterion_ids(self) -> list[int]:
        return sorted(set(self.items) | set(self.item_trait))


def _valid_counts(quotes: pd.DataFrame, traits: Traits, texts: dict[int, str]) -> dict[tuple, int]:
    """(response, trait, sample) → distinct valid quotes among its items' and the trait's own."""
    gathered: dict[tuple, set] = defaultdict(set)
    for r, c, sample, listed in quotes.itertuples(index=False):
        trait = c if c in traits.items else traits.item_trait.get(c)
        if trait is not None and listed:
            gathered[(int(r), trait, int(sample))].update(listed)
    return {key: len(evidence_valid_quotes(quotes=sorted(found), response_text=texts.get(key[0], "")))
            for key, found in gathered.items()}


def _score(traits: Traits, rows: pd.DataFrame, valid: dict) -> dict[tuple, int]:
    """(response, trait, sample) → trait score, from item rows (response, criterion_id, value, sample)."""
    scores = {}
    items = rows[rows["criterion_id"].isin(traits.item_trait)]
    items = items.assign(trait=items["criterion_id"].map(traits.item_trait))
    for (r, trait, sample), part in items.groupby(["response", "trait", "sample"], sort=True):
        info = traits.info[trait]
        rule = info["rule"]
        scores[(int(r), int(trait), int(sample))] = metrics.trait_score(
            decisions=part["value"].tolist(), lo=info["lo"], hi=info["hi"], valid_quotes=valid.get((int(r), int(trait), int(sample)), 0),
            min_evidence=rule.get("min_evidence", 0), gate=rule.get("gate"))
    return scores


def source_trait_scores(*, inputs: ReportInputs, source, traits: Traits) -> dict[tuple[int, int], int]:
    """(response pk, trait pk) → the source's trait score."""
    ids = traits.criterion_ids()
    judge = source.obj if source.kind == "judge" else None
    if judge is not None and not judge.kind.votes_over_members:
        outputs = judge_sample_outputs(judge=judge, responses=inputs.responses, criteria=inputs.criteria)
        outputs = outputs[outputs["criterion_id"].isin(ids)]
        quotes = evidence_rows(project=inputs.project, criterion_ids=ids, judges=[judge])
    else:
        outputs = inputs.decisions(source)
        outputs = outputs[outputs["criterion_id"].isin(ids)].assign(sample=0)
        if judge is not None:  # a panel: its members' quotes
            quotes = evidence_rows(project=inputs.project, criterion_ids=ids, judges=panel_members(judge=judge)).assign(sample=0)
        else:
            quotes = evidence_rows(project=inputs.project, criterion_ids=ids,
                                   cohort=source.obj if source.kind == "cohort" else None)
    rows = decision_values(outputs, inputs.criteria)
    rows["sample"] = outputs["sample"].to_numpy()
    quoted = {int(r) for r, listed in zip(quotes["response_id"], quotes["quotes"]) if listed}
    texts = dict(Response.objects.filter(pk__in=quoted).values_list("pk", "text")) if quoted else {}
    per_sample = _score(traits, rows, _valid_counts(quotes, traits, texts))
    by_item: dict[tuple, list] = defaultdict(list)
    for (r, trait, _), score in sorted(per_sample.items()):
        by_item[(r, trait)].append(score)
    scores = {key: metrics.samples_trait_score(values) for key, values in by_item.items()}
    direct = rows[rows["criterion_id"].isin(traits.items) & rows["value"].notna()]
    for r, c, value in zip(direct["response"], direct["criterion_id"], direct["value"]):
        if scores.get((int(r), int(c))) is None:
            scores[(int(r), int(c))] = metrics.round_half_up(float(value))
    return {key: value for key, value in scores.items() if value is not None}


def _qwk(a: list[int], b: list[int], lo: float, hi: float) -> float | None:
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn loads on first use, not at start-up

    if len(a) < 2 or len(set(a) | set(b)) < 2:
        return None
    value = cohen_kappa_score(a, b, weights="quadratic", labels=list(range(int(np.ceil(lo)), int(np.floor(hi)) + 1)))
    return as_number(value)


def _qwk_interval(both: list[tuple], cases: list, lo: float, hi: float) -> list | None:
    """Bootstrap 95% interval of a trait's QWK resampling cases."""
    a, b = np.array([x for x, _ in both]), np.array([y for _, y in both])
    ci = metrics.case_bootstrap_ci(np.asarray(cases), lambda rows: _qwk(a[rows].tolist(), b[rows].tolist(), lo, hi))
    return interval_pair(ci)


def trait_scores_compute(*, inputs: ReportInputs, source, reference=None, ci: bool = False) -> dict:
    """With ``ci`` and a reference, a bootstrap 95% interval of each trait's QWK resampling cases
    (``qwk_ci``)."""
    traits = Traits(inputs)
    if not traits.items:
        raise ReportUnavailable(f"project {inputs.project.slug!r} has no traits (criteria with checklist items, checklist_of)")
    scores = source_trait_scores(inputs=inputs, source=source, traits=traits)
    external = inputs.responses["external_id"]
    responses: dict[str, dict] = defaultdict(dict)
    for (r, trait), score in sorted(scores.items(), key=lambda kv: (external.get(kv[0][0], ""), traits.info[kv[0][1]]["id"])):
        if r in external.index:
            responses[str(external[r])][traits.info[trait]["id"]] = score
    out = {
        "source": source.spec,
        "responses": dict(responses),
        "traits": {info["id"]: {"lo": info["lo"], "hi": info["hi"], "items": len(traits.items[pk]),
                                "min_evidence": info["rule"].get("min_evidence", 0), "gate": info["rule"].get("gate"),
                                "n_scored": sum(1 for (_, t) in scores if t == pk)}
                   for pk, info in sorted(traits.info.items(), key=lambda kv: kv[1]["id"])},
    }
    if reference is not None:
        theirs = source_trait_scores(inputs=inputs, source=reference, traits=traits)
        out["reference"] = reference.spec
        out["qwk"] = {}
        if ci:
            out["qwk_ci"] = {}
        case_of = inputs.responses["case_id"]
        for pk, info in sorted(traits.info.items(), key=lambda kv: kv[1]["id"]):
            keys = [k for k in scores if k[1] == pk and k in theirs]
            both = [(scores[k], theirs[k]) for k in keys]
            out["qwk"][info["id"]] = _qwk([a for a, _ in both], [b for _, b in both], info["lo"], info["hi"])
            if ci:
                out["qwk_ci"][info["id"]] = _qwk_interval(both, [case_of[r] for r, _ in keys], info["lo"], info["hi"])
    return out



def traits_page(*, project, source: str | None = None, reference: str | None = None, ci: bool = False) -> dict:
    """The traits page: each response's trait score under a source and a reference, QWK (with
    ``ci``, its bootstrap 95% interval resampling cases) and the score distributions per trait.
    Defaults: the first compiled judge (else the first judge) against the first cohort."""
    inputs = ReportInputs(project)
    traits = Traits(inputs)
    sources = project_sources(project=project)
    choices = [s.spec for s in sources["cohorts"] + sources["judges"]] + ["gold"]
    if not traits.items:
        return {"traits": [], "sources": choices, "source": None, "reference": None, "tables": {}}
    judges = [j for j in sources["judges"] if not j.obj.kind.votes_over_members]
    compiled = [j for j in judges if j.obj.typed_settings.compiled]
    source = source or next((j.spec for j in compiled + judges), None) or (sources["cohorts"][0].spec if sources["cohorts"] else "gold")
    if reference == "none":
        reference = None
    else:
        reference = reference or next((c.spec for c in sources["cohorts"] if c.spec != source), None)
    parsed = {spec: source_parse(text=spec, project=project) for spec in (source, reference) if spec}
    mine = TRAIT_SCORES.run(project=project, source=parsed[source], reference=parsed.get(reference), inputs=inputs,
                            ci=ci and reference is not None)
    theirs = (TRAIT_SCORES.run(project=project, source=parsed[reference], reference=None, inputs=inputs) if reference
              else {"responses": {}})
    rows, distributions = [], {}
    for trait, info in mine["traits"].items():
        scale = list(range(int(np.ceil(info["lo"])), int(np.floor(info["hi"])) + 1))
        a = [s[trait] for s in mine["responses"].values() if trait in s]
        b = [s[trait] for s in theirs["responses"].values() if trait in s]
        distributions[trait] = {"scale": scale, "source": [a.count(v) for v in scale], "reference": [b.count(v) for v in scale]}
        for response in sorted(set(mine["responses"]) | set(theirs["responses"])):
            ours, other = mine["responses"].get(response, {}).get(trait), theirs["responses"].get(response, {}).get(trait)
            if ours is not None or other is not None:
                rows.append([response, trait, ours, other])
    qwk, qwk_ci = mine.get("qwk") or {}, mine.get("qwk_ci")
    interval = ["qwk 95% CI"] if qwk_ci is not None else []
    return {
        "traits": list(mine["traits"]), "sources": choices, "source": source, "reference": reference,
        "trait_info": mine["traits"], "qwk": qwk, "qwk_ci": qwk_ci, "distributions": distributions, "ci": ci,
        "tables": {
            "traits": {"columns": ["trait", "lo", "hi", "items", "min_evidence", "gate", "scored", f"qwk vs {reference}",
                                   *interval],
                       "rows": [[t, i["lo"], i["hi"], i["items"], i["min_evidence"], i["gate"], i["n_scored"], qwk.get(t),
                                 *([interval_text(qwk_ci.get(t))] if interval else [])]
                                for t, i in mine["traits"].items()]},
            "scores": {"columns": ["response", "trait", source, reference or "reference"], "rows": rows},
        },
    }


def traits_charts(result: dict, project) -> dict:
    out = {}
    for trait, dist in (result.get("distributions") or {}).items():
        n_a, n_b = sum(dist["source"]) or 1, sum(dist["reference"]) or 1
        series = [(result["source"], [c / n_a for c in dist["source"]])]
        if result.get("reference"):
            series.append((result["reference"], [c / n_b for c in dist["reference"]]))
        out[trait] = charts.bar_chart(
            title=f"Trait {trait}: share of responses per score (n = {sum(dist['source'])} and {sum(dist['reference'])})",
            labels=[str(v) for v in dist["scale"]], series=series,
            value_title="share of responses", label_title="score",
        )
    return out


# --- the declaration ------------------------------------------------------------------------

class TraitScoresParams(Params):
    source = SourceField(help_text="cohort:NAME, judge:NAME or gold")
    reference = SourceField(required=False, allow_null=True, default=None, help_text="a second source: adds QWK per trait")


class TraitsPageParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None)
    reference = SourceField(spec=True, required=False, allow_null=True, default=None)
    ci = Flag()

    def to_internal_value(self, data):  # "none": no reference asked for (the default is the first cohort)
        if data.get("reference") != "none":
            return super().to_internal_value(data)
        data = data.copy()
        data.pop("reference")
        return {**super().to_internal_value(data), "reference": "none"}


def trait_scores_output(result: dict, params: dict) -> dict:
    keys = ("responses", "traits", "source", "n_excluded_cases", "n_draft_labels")
    keys += (("qwk", "reference") if params.get("reference") else ())
    keys += ("qwk_ci",) if params.get("reference") and params.get("ci") else ()
    return {key: result[key] for key in keys}


TRAIT_SCORES = register(Report(
    key="trait_scores", title="Traits",
    help="Trait scores (RULERS compiled rubrics) per response, and QWK per trait against a reference.",
    params=TraitScoresParams, compute=trait_scores_compute, output=trait_scores_output, cannot_assess="skip",
    page=Page(key="traits", params=TraitsPageParams, build=traits_page, template="grading/reports/traits.html",
              charts=traits_charts, position=60),
))
