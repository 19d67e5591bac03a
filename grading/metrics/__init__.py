"""Pure metric functions of evalsite (SPEC §3), free of the web framework and the
database. Selectors load rows into numpy arrays or DataFrames, services call these
functions and persist the frozen dataclasses they return. Undefined figures are None
(NaN inside DataFrames), never 0 or 1; bad input raises `MetricError` (a ValueError).
Proportions in agreement results are fractions in [0, 1]; coverage and positive rates
named `_pct` / `_pp` are percentages / percentage points. Public API:

agreement   binary_agreement(a, b) -> BinaryAgreement          (0/1 arrays, a = truth)
            case_level_mf1(df, *, keys=("model","case"), a="a", b="b", threshold=0.6) -> CaseLevelMF1
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
            calibrate_k(hits_of_human_responses) -> KCalibration       (round half up)
            threshold_sensitivity(df, *, k, ks, model="model", ...) -> ThresholdSensitivity
ranking     compare_rankings(reference, other) -> RankComparison; rank_models(scores); top_n_overlap(a, b, *, n)
scoring     score_response(outcomes, *, strategy, partial_credit=0.5, length_penalty=None, words=None) -> float | None
            score_responses(df, *, strategy, partial_credit=0.5, response="response",
                            length_penalty=None, words=None) -> DataFrame[score, n_scored, n_cannot_assess]
            CriterionOutcome(weight, value, min_value=0, max_value=1, not_applicable=False)
            LengthPenalty(free_words, cap_words, penalty_at_cap, exponent=1); word_count(text)
ensemble    ensemble_vote(df, *, rule, item="item", voter="voter", vote="vote", weights=None,
                          positive=1, negative=0) -> EnsembleResult
judges      judge_fidelity(df, *, judge, references) -> dict[reference, BinaryAgreement]
            cross_grader_robustness(df, *, model="model", a="a", b="b") -> CrossGraderRobustness
            monte_carlo_stability(df, *, keys=("judge","response","criterion"), judge="judge",
                                  value="value") -> MonteCarloStability
bias        bias_matrix(df, *, judge="judge", target="target", score="score", judge_models=None) -> BiasMatrix
            consensus_deviation(scores) -> DataFrame; mean_score_matrix(df, ...) -> (means, counts)
            self_bias_attenuation(*, attributed, anonymized) -> float | None
            attenuation_by_judge(*, attributed, anonymized) -> dict[judge, float | None]
            human_llm_bias(judge_df, human_df, *, judge="judge", target="target", score="score") -> HumanLlmBias
calibration split_items(items, *, holdout_fraction=0.5, seed=0) -> (calibration, holdout)
            fit_quantile_map(judge_scores, human_scores) -> QuantileMap; apply_quantile_map(qmap, scores)
            snap_to_levels(scores, levels) -> ndarray
            evaluate_calibration(df, *, item="item", judge="judge_score", human="human_score",
                                 levels=None, holdout_fraction=0.5, seed=0) -> CalibrationReport
verbosity   length_score_correlation(lengths, scores) -> LengthCorrelation
            verbosity_check(df, *, length="length_chars", score="score", model="model") -> VerbosityReport
bootstrap   bootstrap_mean_ci(values, *, confidence=0.95, n_resamples=2000, seed=0) -> BootstrapCI(low, high, n)
alignment   normalize_text(text) -> str
            align_rows(left, right, *, model="model", case_text="case_text",
                       criterion_text="criterion_text") -> Alignment
"""

from .agreement import (
    BinaryAgreement,
    CaseLevelMF1,
    OrdinalAgreement,
    binary_agreement,
    case_level_mf1,
    krippendorff_alpha,
    mf1_by_group,
    ordinal_agreement,
)
from .alignment import Alignment, align_rows, normalize_text
from .bias import (
    BiasMatrix,
    HumanLlmBias,
    attenuation_by_judge,
    bias_matrix,
    consensus_deviation,
    human_llm_bias,
    mean_score_matrix,
    self_bias_attenuation,
)
from .bootstrap import BootstrapCI, bootstrap_mean_ci
from .calibration import (
    CalibrationReport,
    QuantileMap,
    apply_quantile_map,
    evaluate_calibration,
    fit_quantile_map,
    snap_to_levels,
    split_items,
)
from .coverage import (
    Coverage,
    KCalibration,
    RankingAlternative,
    ThresholdSensitivity,
    calibrate_k,
    coverage,
    coverage_by_model,
    coverage_by_stratum,
    response_hits,
    threshold_sensitivity,
)
from .ensemble import EnsembleResult, VoteRule, ensemble_vote
from .errors import MetricError
from .judges import (
    CrossGraderRobustness,
    JudgeStability,
    MonteCarloStability,
    cross_grader_robustness,
    judge_fidelity,
    monte_carlo_stability,
)
from .ranking import RankComparison, compare_rankings, rank_models, top_n_overlap
from .scoring import (
    CriterionOutcome,
    LengthPenalty,
    score_response,
    score_responses,
    word_count,
)
from .strategies import (
    CannotAssess,
    ResolvedVerdicts,
    apply_cannot_assess,
    paired_decisions,
    parse_strategy,
)
from .verbosity import LengthCorrelation, VerbosityReport, length_score_correlation, verbosity_check

__all__ = [
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
    "HumanLlmBias",
    "JudgeStability",
    "KCalibration",
    "LengthCorrelation",
    "LengthPenalty",
    "MetricError",
    "MonteCarloStability",
    "OrdinalAgreement",
    "QuantileMap",
    "RankComparison",
    "RankingAlternative",
    "ResolvedVerdicts",
    "ThresholdSensitivity",
    "VerbosityReport",
    "VoteRule",
    "align_rows",
    "apply_cannot_assess",
    "apply_quantile_map",
    "attenuation_by_judge",
    "binary_agreement",
    "bias_matrix",
    "bootstrap_mean_ci",
    "calibrate_k",
    "case_level_mf1",
    "compare_rankings",
    "consensus_deviation",
    "coverage",
    "coverage_by_model",
    "coverage_by_stratum",
    "cross_grader_robustness",
    "ensemble_vote",
    "evaluate_calibration",
    "fit_quantile_map",
    "human_llm_bias",
    "judge_fidelity",
    "krippendorff_alpha",
    "length_score_correlation",
    "mean_score_matrix",
    "mf1_by_group",
    "monte_carlo_stability",
    "normalize_text",
    "ordinal_agreement",
    "paired_decisions",
    "parse_strategy",
    "rank_models",
    "response_hits",
    "score_response",
    "score_responses",
    "self_bias_attenuation",
    "snap_to_levels",
    "split_items",
    "threshold_sensitivity",
    "top_n_overlap",
    "verbosity_check",
    "word_count",
]
