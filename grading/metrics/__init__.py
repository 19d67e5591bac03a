"""Pure metric functions of evalsite (SPEC §3), free of the web framework and the
database. Selectors load rows into numpy arrays or DataFrames, services call these
functions and persist the frozen dataclasses they return. Undefined figures are None
(NaN inside DataFrames), never 0 or 1; bad input raises `MetricError` (a ValueError).
Proportions in agreement results are fractions in [0, 1]; coverage and positive rates
named `_pct` / `_pp` are percentages / percentage points. Public API:

agreement   binary_agreement(a, b) -> BinaryAgreement          (0/1 arrays, a = truth)
            case_level_mf1(df, *, keys=("model","case"), a="a", b="b", threshold=0.6) -> CaseLevelMF1
            mf1_from_counts(tp, fp, fn, tn) -> ndarray (MF1 per group of counted pairs)
            mf1_by_group(df, *, by="model", a="a", b="b") -> dict[key, BinaryAgreement]
            ordinal_agreement(a_values, b_values, *, option_values) -> OrdinalAgreement
            krippendorff_alpha(reliability_data, *, level="nominal", value_domain=None) -> float | None
strategies  apply_cannot_assess(verdicts, *, strategy, penalty=None) -> ResolvedVerdicts
            paired_decisions(a: ResolvedVerdicts, b: ResolvedVerdicts) -> (ndarray, ndarray)
            parse_strategy(strategy) -> CannotAssess
coverage    response_hits(decisions, *, response="response", value="value", carry=("model",)) -> DataFrame
            coverage(df, *, k, hits="hits", total="n_criteria") -> Coverage
            coverage_by_model(df, *, k, model="model", ...) -> dict[model, Coverage]
            coverage_by_stratum(df, *, k, stratum, model="model", ...) -> dict[(stratum, model), Coverage]
            coverage_terms(df, *, k, hits="hits", total="n_criteria") -> DataFrame[accuracy, passed, cacs]
            deviation_from_overall(cells: {(stratum, model): x}, overall: {model: x}) -> {(stratum, model): x − overall}
            calibrate_k(hits_of_human_responses) -> KCalibration       (round half up)
            threshold_sensitivity(df, *, k, ks, model="model", ...) -> ThresholdSensitivity
ranking     compare_rankings(reference, other) -> RankComparison; rank_models(scores); top_n_overlap(a, b, *, n)
scoring     score_response(outcomes, *, strategy, partial_credit=0.5, length_penalty=None, words=None) -> float | None
            score_responses(df, *, strategy, partial_credit=0.5, response="response",
                            length_penalty=None, words=None) -> DataFrame[score, n_scored, n_cannot_assess]
            CriterionOutcome(weight, value, min_value=0, max_value=1, not_applicable=False)
            LengthPenalty(free_words, cap_words, penalty_at_cap, exponent=1); word_count(text)
decisions   the decision rules of SPEC §2/§3 (one place): cohort_decide(labels, *, keys), cohort_votes(labels, *, keys),
            samples_decide(rows, *, keys), panel_decide(decisions, *, keys, rule, weights),
            gold_decide(cohorts, adjudications, *, keys), judge_outputs(rows), missing_outputs(...),
            SourceDecision, decision_fields(*, verdict, option, value)
values      a decision's value and the rescaling rule: numeric_values(*, kind, verdict, value),
            unit_scale(values, lo, hi), unit_bounds(lo, hi)
ensemble    ensemble_vote(df, *, rule, item="item", voter="voter", vote="vote", weights=None,
                          positive=1, negative=0) -> EnsembleResult
judges      judge_fidelity(df, *, judge, references) -> dict[reference, BinaryAgreement]
            cross_grader_robustness(df, *, model="model", a="a", b="b") -> CrossGraderRobustness
            monte_carlo_stability(df, *, keys=("judge","response","criterion"), judge="judge",
                                  value="value") -> MonteCarloStability
bias        bias_matrix(df, *, judge="judge", target="target", score="score", judge_models=None) -> BiasMatrix
            consensus_deviation(scores) -> DataFrame; mean_score_matrix(df, ...) -> (means, counts)
            monte_carlo_groups(df, *, keys, sample, score) -> DataFrame (keys, mu, sd, n_samples)
            monte_carlo_cells(df, *, judge, target, sample, score) -> (mu, sd, n_samples)
            self_bias_attenuation(*, attributed, anonymized) -> float | None
            attenuation_by_judge(*, attributed, anonymized) -> dict[judge, float | None]
            human_llm_bias(judge_df, human_df, *, judge="judge", target="target", score="score") -> HumanLlmBias
traits      trait_score(*, decisions, lo, hi, valid_quotes=0, min_evidence=0, gate=None) -> int | None
            samples_trait_score(scores) -> int | None; round_half_up(x) -> int
calibration split_items(items, *, holdout_fraction=0.5, seed=0) -> (calibration, holdout)
            fit_quantile_map(judge_scores, human_scores) -> QuantileMap; apply_quantile_map(qmap, scores)
            snap_to_levels(scores, levels) -> ndarray; level_counts(snapped, levels) -> tuple[int, ...]
            evaluate_calibration(df, *, item="item", judge="judge_score", human="human_score",
                                 levels=None, holdout_fraction=0.5, seed=0) -> CalibrationReport
verbosity   length_score_correlation(lengths, scores) -> LengthCorrelation
            verbosity_check(df, *, length="length_chars", score="score", model="model") -> VerbosityReport
healthbench healthbench_score(examples, *, n_resamples=1000, seed=0) -> HealthBenchScore
            HealthBenchExample(points, met, item_tags=(), example_tags=()); example_score(points, met);
            clipped_mean(values); clipped_mean_bootstrap_std(values, *, n_resamples=1000, seed=0)
            example_figures(example); healthbench_counts(examples)
            healthbench_intervals(examples, cases, *, confidence=0.95, n_resamples=2000, seed=0) -> dict
ppi         ppi_mean(human, judge_labelled, judge_unlabelled, *, alpha=0.05, weights=None) -> PpiEstimate
active      routing_probabilities(uncertainty, budget, *, uniform_share=0.2) -> ndarray
            response_uncertainty(p_met, n_criteria) -> ndarray
            active_mean(values, judge, probabilities, *, alpha=0.05, lam=None) -> ActiveEstimate
            design_width(values, judge, probabilities, planned, *, lam) -> float
            budget_for_width(target, values, judge, probabilities, design, *, lam) -> int | None
            uniform_design(n); routed_design(uncertainty, *, uniform_share=0.2)
bootstrap   bootstrap_mean_ci(values, *, confidence=0.95, n_resamples=2000, seed=0) -> BootstrapCI(low, high, n)
raters      gold_quality(items: [CheckItem(hits, total)], *, window, threshold, min_items) -> GoldQuality
            rolling_agreement(items, *, window) -> list; nominal_kappa(a_codes, b_codes) -> float | None
            seconds_summary(seconds) -> (median, mean)
alignment   normalize_text(text) -> str
            align_rows(left, right, *, model="model", case_text="case_text",
                       criterion_text="criterion_text") -> Alignment
"""

import importlib

# Submodules load on first use (PEP 562), so that reading the decision rules or a vote does
# not import scikit-learn, scipy and krippendorff into every web process.
_SOURCES = {
    "ActiveEstimate": "active",
    "Alignment": "alignment",
    "BiasMatrix": "bias",
    "BinaryAgreement": "agreement",
    "BootstrapCI": "bootstrap",
    "CalibrationReport": "calibration",
    "CannotAssess": "strategies",
    "CaseLevelMF1": "agreement",
    "Coverage": "coverage",
    "CriterionOutcome": "scoring",
    "CrossGraderRobustness": "judges",
    "EnsembleResult": "ensemble",
    "HealthBenchExample": "healthbench",
    "HealthBenchScore": "healthbench",
    "HumanLlmBias": "bias",
    "JudgeStability": "judges",
    "KCalibration": "coverage",
    "PpiEstimate": "ppi",
    "LengthCorrelation": "verbosity",
    "LengthPenalty": "scoring",
    "MetricError": "errors",
    "MonteCarloStability": "judges",
    "OrdinalAgreement": "agreement",
    "QuantileMap": "calibration",
    "RankComparison": "ranking",
    "RankingAlternative": "coverage",
    "ResolvedVerdicts": "strategies",
    "SourceDecision": "decisions",
    "ThresholdSensitivity": "coverage",
    "VerbosityReport": "verbosity",
    "VoteRule": "ensemble",
    "routing_probabilities": "active",
    "response_uncertainty": "active",
    "active_mean": "active",
    "design_width": "active",
    "budget_for_width": "active",
    "uniform_design": "active",
    "routed_design": "active",
    "align_rows": "alignment",
    "apply_cannot_assess": "strategies",
    "apply_quantile_map": "calibration",
    "attenuation_by_judge": "bias",
    "bias_matrix": "bias",
    "binary_agreement": "agreement",
    "bootstrap_mean_ci": "bootstrap",
    "case_bootstrap_mean_ci": "bootstrap",
    "case_bootstrap_ci": "bootstrap",
    "calibrate_k": "coverage",
    "clipped_mean": "healthbench",
    "clipped_mean_bootstrap_std": "healthbench",
    "example_score": "healthbench",
    "example_figures": "healthbench",
    "healthbench_counts": "healthbench",
    "healthbench_intervals": "healthbench",
    "healthbench_score": "healthbench",
    "ppi_mean": "ppi",
    "case_level_mf1": "agreement",
    "mf1_from_counts": "agreement",
    "cohort_decide": "decisions",
    "cohort_votes": "decisions",
    "compare_rankings": "ranking",
    "consensus_deviation": "bias",
    "coverage": "coverage",
    "coverage_by_model": "coverage",
    "coverage_by_stratum": "coverage",
    "coverage_terms": "coverage",
    "deviation_from_overall": "coverage",
    "cross_grader_robustness": "judges",
    "cross_grader_intervals": "judges",
    "decision_fields": "decisions",
    "ensemble_vote": "ensemble",
    "evaluate_calibration": "calibration",
    "fit_quantile_map": "calibration",
    "fit_ridge_calibration": "calibration",
    "RidgeCalibration": "calibration",
    "split_by_size": "calibration",
    "gold_decide": "decisions",
    "human_llm_bias": "bias",
    "judge_fidelity": "judges",
    "judge_outputs": "decisions",
    "krippendorff_alpha": "agreement",
    "krippendorff_alpha_ci": "agreement",
    "length_score_correlation": "verbosity",
    "level_counts": "calibration",
    "mean_score_matrix": "bias",
    "mf1_by_group": "agreement",
    "missing_outputs": "decisions",
    "monte_carlo_cells": "bias",
    "monte_carlo_groups": "bias",
    "monte_carlo_mu_ci": "bias",
    "monte_carlo_stability": "judges",
    "annotator_included": "pairwise",
    "pairwise_agreement": "pairwise",
    "pairwise_intervals": "pairwise",
    "partial_correlation": "verbosity",
    "round_half_up": "traits",
    "samples_trait_score": "traits",
    "trait_score": "traits",
    "normalize_text": "alignment",
    "numeric_values": "values",
    "ordinal_agreement": "agreement",
    "paired_decisions": "strategies",
    "panel_decide": "decisions",
    "panel_agreement": "decisions",
    "parse_strategy": "strategies",
    "rank_models": "ranking",
    "response_hits": "coverage",
    "samples_decide": "decisions",
    "score_response": "scoring",
    "score_responses": "scoring",
    "self_bias_attenuation": "bias",
    "snap_to_levels": "calibration",
    "split_items": "calibration",
    "threshold_sensitivity": "coverage",
    "top_n_overlap": "ranking",
    "unit_bounds": "values",
    "unit_scale": "values",
    "verbosity_check": "verbosity",
    "word_count": "scoring",
    "CheckItem": "raters",
    "GoldQuality": "raters",
    "gold_quality": "raters",
    "nominal_kappa": "raters",
    "rolling_agreement": "raters",
    "seconds_summary": "raters",
}


def __getattr__(name: str):
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(f".{module}", __name__)
    # Bind every public name of that submodule at once: importing ``.coverage`` makes the package
    # attribute ``coverage`` the submodule, and the function of that name must win.
    for public, source in _SOURCES.items():
        if source == module:
            globals()[public] = getattr(loaded, public)
    return globals()[name]


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))

__all__ = [
    "ActiveEstimate",
    "Alignment",
    "BiasMatrix",
    "BinaryAgreement",
    "BootstrapCI",
    "CalibrationReport",
    "CannotAssess",
    "CaseLevelMF1",
    "Coverage",
    "CriterionOutcome",
    "CrossGraderRobustness",
    "EnsembleResult",
    "HealthBenchExample",
    "HealthBenchScore",
    "HumanLlmBias",
    "JudgeStability",
    "KCalibration",
    "PpiEstimate",
    "LengthCorrelation",
    "LengthPenalty",
    "MetricError",
    "MonteCarloStability",
    "OrdinalAgreement",
    "QuantileMap",
    "RankComparison",
    "RankingAlternative",
    "ResolvedVerdicts",
    "SourceDecision",
    "ThresholdSensitivity",
    "VerbosityReport",
    "VoteRule",
    "routing_probabilities",
    "response_uncertainty",
    "active_mean",
    "design_width",
    "budget_for_width",
    "uniform_design",
    "routed_design",
    "align_rows",
    "apply_cannot_assess",
    "apply_quantile_map",
    "attenuation_by_judge",
    "binary_agreement",
    "bias_matrix",
    "bootstrap_mean_ci",
    "calibrate_k",
    "clipped_mean",
    "clipped_mean_bootstrap_std",
    "example_score",
    "example_figures",
    "healthbench_counts",
    "healthbench_intervals",
    "healthbench_score",
    "ppi_mean",
    "case_level_mf1",
    "mf1_from_counts",
    "compare_rankings",
    "consensus_deviation",
    "coverage",
    "coverage_by_model",
    "coverage_by_stratum",
    "coverage_terms",
    "deviation_from_overall",
    "cross_grader_intervals",
    "cross_grader_robustness",
    "ensemble_vote",
    "evaluate_calibration",
    "fit_quantile_map",
    "human_llm_bias",
    "judge_fidelity",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
    "length_score_correlation",
    "level_counts",
    "mean_score_matrix",
    "mf1_by_group",
    "monte_carlo_cells",
    "monte_carlo_groups",
    "monte_carlo_mu_ci",
    "monte_carlo_stability",
    "normalize_text",
    "ordinal_agreement",
    "paired_decisions",
    "parse_strategy",
    "rank_models",
    "round_half_up",
    "samples_trait_score",
    "response_hits",
    "score_response",
    "score_responses",
    "self_bias_attenuation",
    "snap_to_levels",
    "split_items",
    "threshold_sensitivity",
    "top_n_overlap",
    "verbosity_check",
    "cohort_decide",
    "cohort_votes",
    "decision_fields",
    "gold_decide",
    "judge_outputs",
    "missing_outputs",
    "numeric_values",
    "panel_decide",
    "samples_decide",
    "unit_bounds",
    "unit_scale",
    "word_count",
    "trait_score",
    "fit_ridge_calibration",
    "RidgeCalibration",
    "split_by_size",
    "annotator_included",
    "pairwise_agreement",
    "pairwise_intervals",
    "partial_correlation",
    "case_bootstrap_ci",
    "case_bootstrap_mean_ci",
    "panel_agreement",
]
