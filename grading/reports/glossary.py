"""What every figure on a report page means, in plain words: the header a table shows for a
column, the definition its tooltip gives, and the help page that lists them all.

Tables keep their machine names (``n_decisions``, ``pass_at_k``) in CSV downloads and in the
API; pages show ``Term.words`` with ``Term.definition`` on hover. A column derived from a term
(``mf1 vs cohort:group-1``, ``pass_at_k 95% CI``, ``gpt-4o (μ ± σ)``) is explained by
``term_for``; a column named after a model or a source is data, not a term, and has no entry.
A test holds every lower-case column name of every report to an entry here.
"""
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    key: str
    words: str
    definition: str
    group: str


GROUPS = {
    "agreement": "Agreement between two sources",
    "coverage": "Coverage of a rubric",
    "scores": "Scores and scales",
    "judges": "Judges, samples and panels",
    "ppi": "Prediction-powered estimates",
    "counts": "Counts and identifiers",
}

_TERMS = [
    # agreement
    ("mf1", "MF1", "Macro F1: the mean of the F1 of 'met' and the F1 of 'not met', with the reference source (A) "
     "taken as the truth. 1 is perfect agreement; undefined when a class occurs in neither source.", "agreement"),
    ("f1_met", "F1 (met)", "F1 of the 'met' class: 2·TP / (2·TP + FP + FN), A as the truth.", "agreement"),
    ("f1_not_met", "F1 (not met)", "F1 of the 'not met' class: 2·TN / (2·TN + FP + FN), A as the truth.", "agreement"),
    ("precision_met", "Precision (met)", "Of the decisions B marked met, the share A also marked met.", "agreement"),
    ("precision_not_met", "Precision (not met)", "Of the decisions B marked not met, the share A also marked not met.",
     "agreement"),
    ("recall_met", "Recall (met)", "Of the decisions A marked met, the share B also marked met.", "agreement"),
    ("recall_not_met", "Recall (not met)", "Of the decisions A marked not met, the share B also marked not met.",
     "agreement"),
    ("cohen_kappa", "Cohen's κ", "Agreement of two sources corrected for the agreement expected by chance from each "
     "source's own rates: 1 perfect, 0 no better than chance, below 0 worse.", "agreement"),
    ("krippendorff_alpha", "Krippendorff's α", "Chance-corrected agreement over any number of raters, allowing missing "
     "labels: 1 perfect, 0 chance level. 0.8 is a common bar for reliable data, 0.667 for tentative conclusions.",
     "agreement"),
    ("percent_agreement", "Agreement (%)", "The share of paired decisions on which both sources say the same.",
     "agreement"),
    ("positive_rate", "Met rate", "The share of decisions that are 'met'.", "agreement"),
    ("positive_rate_a", "Met rate of A", "The share of the reference source's decisions that are 'met'.", "agreement"),
    ("positive_rate_b", "Met rate of B", "The share of the compared source's decisions that are 'met'.", "agreement"),
    ("invalid", "Invalid", "Judge answers that were missing, malformed or unreadable. They count as 'not met' and are "
     "never dropped.", "agreement"),
    ("invalid_b", "Invalid in B", "Answers of the compared source that were missing or unreadable (counted as 'not "
     "met').", "agreement"),
    ("qwk", "Quadratic-weighted κ", "Cohen's κ for ordinal scales where a disagreement costs the square of its "
     "distance: being off by two options costs four times being off by one.", "agreement"),
    ("qwk_before", "QWK before", "Quadratic-weighted κ of the raw judge against the humans on the held-out items.",
     "agreement"),
    ("qwk_after", "QWK after", "Quadratic-weighted κ of the calibrated judge against the humans on the same held-out "
     "items.", "agreement"),
    ("linear_wk", "Linear-weighted κ", "Cohen's κ where a disagreement costs its distance on the scale.", "agreement"),
    ("pearson", "Pearson r", "Linear correlation of the two sources' values (−1 to 1).", "agreement"),
    ("pearson_r", "Pearson r", "Linear correlation (−1 to 1).", "agreement"),
    ("pearson_p", "Pearson p", "The p-value of the Pearson correlation (how surprising it would be with no "
     "relation).", "agreement"),
    ("spearman", "Spearman ρ", "Rank correlation of the two sources' values (−1 to 1): do they order items alike?",
     "agreement"),
    ("spearman_rho", "Spearman ρ", "Rank correlation (−1 to 1) of two orderings.", "agreement"),
    ("spearman_p", "Spearman p", "The p-value of the Spearman correlation.", "agreement"),
    ("kendall_tau", "Kendall τ", "Rank correlation (−1 to 1) from the share of pairs of models ordered alike minus "
     "the share ordered oppositely.", "agreement"),
    ("mean_difference", "Mean difference", "The mean of B's value minus A's value over the paired items; above 0, B "
     "scores higher.", "agreement"),
    ("emd", "Earth mover's distance", "How far the distribution of B's values is from A's: the least total shift, in "
     "scale points, that turns one into the other.", "agreement"),
    ("ks_statistic", "KS statistic", "The Kolmogorov–Smirnov statistic: the largest gap between the two sources' "
     "cumulative distributions (0 to 1).", "agreement"),
    ("ks_pvalue", "KS p", "The p-value of the Kolmogorov–Smirnov test that both sources' values come from one "
     "distribution.", "agreement"),
    ("matched_responses", "Matched responses", "Responses found in both sources (by id, or by model and case text "
     "when the cohorts were imported separately).", "agreement"),
    ("unmatched_responses", "Unmatched responses", "Responses found in only one of the two sources; they are left out "
     "of the comparison.", "agreement"),
    ("case_n", "Cases", "The number of (model, case) groups with a defined case-level MF1.", "agreement"),
    ("share_below", "Share below 0.6", "The share of (model, case) groups whose case-level MF1 is below 0.6: the "
     "low-agreement tail that adjudication looks at.", "agreement"),
    ("mean_agreement", "Mean agreement", "The mean share of voters who agree with the panel's vote.", "judges"),
    ("mean_abs_diff_pp", "Mean |difference| (pp)", "The mean absolute difference, in percentage points, of each "
     "model's met rate under the two sources.", "agreement"),
    ("top3_overlap", "Top-3 overlap", "How many of the three best models are the same in both rankings (0–3).",
     "agreement"),
    ("top5_overlap", "Top-5 overlap", "How many of the five best models are the same in both rankings (0–5).",
     "agreement"),
    # coverage
    ("rubric_accuracy", "Rubric accuracy (%)", "The mean over responses of the share of the case's binary criteria "
     "that are met.", "coverage"),
    ("accuracy", "Rubric accuracy (%)", "The mean over responses of the share of the case's binary criteria that are "
     "met.", "coverage"),
    ("pass_at_k", "Pass@k (%)", "The share of responses that meet at least k of their case's binary criteria.",
     "coverage"),
    ("cacs", "CACS@k (%)", "Consensus-anchored coverage: each response earns max(0, s − k + 1) / (N − k + 1), where s "
     "is the criteria it meets and N its case's criteria, averaged over responses. Criteria beyond the threshold k "
     "earn credit; below it, none.", "coverage"),
    ("alternative", "Alternative figure", "The figure whose model ranking is compared with the ranking by CACS@k.",
     "coverage"),
    ("n_models", "Models", "The number of models ranked.", "coverage"),
    ("difficulty", "Difficulty", "The case's difficulty, as given in the case metadata.", "coverage"),
    ("register", "Register", "The case's register (e.g. lay or professional), as given in the case metadata.",
     "coverage"),
    ("task_themes", "Task themes", "The case's task themes, as given in the case metadata; a case may hold several.",
     "coverage"),
    ("specialties", "Specialties", "The case's medical specialties, as given in the case metadata.", "coverage"),
    # scores
    ("score", "Score", "The weighted score of a response: the met criteria's weights over the positive weights, "
     "penalties subtracted, clamped to 0–1 (rubrics with option values use those values).", "scores"),
    ("mean_score", "Mean score", "The mean weighted score over the responses.", "scores"),
    ("characters", "Length (characters)", "The response's length in characters.", "scores"),
    ("scale", "Scale", "The scale of the values compared: the rubric's own (native) or each criterion rescaled to "
     "0–1 (unit).", "scores"),
    ("criterion", "Criterion", "The rubric criterion.", "scores"),
    ("rubric", "Rubric", "The rubric version the judge was run with.", "scores"),
    ("mean_sd_binary", "Mean σ (binary)", "The mean, over items, of the standard deviation of a judge's samples on "
     "binary criteria (0 = every sample agrees).", "judges"),
    ("mean_sd_ordinal", "Mean σ (ordinal)", "The mean standard deviation of a judge's samples on ordinal criteria, "
     "in scale points.", "judges"),
    ("mean_sd_nominal", "Mean σ (nominal)", "The mean standard deviation of a judge's samples on nominal criteria.",
     "judges"),
    # judges
    ("judge", "Judge", "An automated grader (a model with a prompt), or a panel of them.", "judges"),
    ("panel", "Panel", "A judge that combines the votes of several member judges.", "judges"),
    ("vote", "Vote rule", "How the panel combines its members: majority, weighted, unanimous (a split is left "
     "unresolved) or any.", "judges"),
    ("votes", "Votes", "How the panel's decisions fell, counted per outcome.", "judges"),
    ("members", "Members", "The judges or annotators that make up the panel or cohort.", "judges"),
    ("samples_configured", "Samples set", "How many samples the judge is set to draw per item.", "judges"),
    ("samples_seen", "Samples found", "How many samples per item the judge actually has.", "judges"),
    ("n_items_with_sd", "Items with σ", "Items with at least two samples, so a standard deviation exists.", "judges"),
    ("experts", "Experts", "The experts whose scores make up the human reference.", "judges"),
    ("target", "Target model", "The model whose responses are graded.", "judges"),
    ("from", "Fitted on", "The source whose decisions the calibration was fitted to.", "judges"),
    ("n_calibration", "Calibration items", "Items of the seeded calibration split, used to fit the mapping.", "judges"),
    ("n_holdout", "Held-out items", "Items kept out of fitting, on which before/after are measured.", "judges"),
    # the figure pages: stability, pairwise agreement, cross-grader, verbosity, strata
    ('annotator', 'Annotator',
     'One annotator of the cohort.', 'counts'),
    ('tag', 'Tag',
     "A tag of the rubric's criteria.", 'counts'),
    ('theme', 'Theme',
     "The part of a tag before its first colon; its figures are the n-weighted means of its tags'.", 'counts'),
    ('who', 'Who',
     "The cohort's annotators (their mean, weighted by pairs) or the grader.", 'agreement'),
    ('mu', 'Mean over samples (μ)',
     "Per sample, the judge's mean value over the cell's responses; μ is the mean of those per-sample means over "
     "the judge's samples, in the rubric's own scale.", 'judges'),
    ('sigma', 'Spread over samples (σ)',
     "The standard deviation (ddof = 1) of the per-sample means over the judge's samples; none with a single sample.", 'judges'),
    ('n_samples', 'Samples',
     "How many of the judge's samples gave the cell a value.", 'judges'),
    ('mean_sd', 'Mean spread per item',
     "The mean over items of the standard deviation (ddof = 1) of the item's value over the judge's samples; binary "
     "0/1 and ordinal points are never averaged together.", 'judges'),
    ('annotator_mf1', "Annotator's MF1",
     "MF1 of this annotator's labels against every other annotator's labels on the same items, all pairs pooled.", 'agreement'),
    ('n_pairs', 'Pairs',
     "Label pairs (this annotator's label and another annotator's on the same item) behind the figure.", 'agreement'),
    ('included', 'In the mean',
     'Whether the annotator counts in the weighted mean: more pairs than the minimum and an MF1 that is defined.', 'agreement'),
    ('weighted_mean_mf1', "Annotators' mean MF1",
     "The mean of the included annotators' MF1, each weighted by its pairs.", 'agreement'),
    ('grader_mf1', "Grader's MF1",
     "MF1 of the grader's decision against every individual annotator label of the same items.", 'agreement'),
    ('grader_n', "Grader's pairs",
     "Annotator labels the grader's decisions were compared with.", 'agreement'),
    ('percentile', "Grader's percentile",
     "Percent of the included annotators whose MF1 is below the grader's (a tie counts half).", 'agreement'),
    ('a_pct', 'Positive rate under A (%)',
     "Percent of the model's paired binary decisions that source A marks met.", 'agreement'),
    ('b_pct', 'Positive rate under B (%)',
     "Percent of the model's paired binary decisions that source B marks met.", 'agreement'),
    ('n_pairs_model', 'Paired decisions',
     "Binary decisions both sources made on this model's responses.", 'agreement'),
    ('partial', 'Partial r (model and case held fixed)',
     'Correlation of length with the score after each is regressed on model and case indicators: does a longer '
     'answer score higher within the same model and case?', 'scores'),
    ('stratum', 'Stratum',
     "A value of the cases' metadata (or the group it belongs to, as the project's settings group them).", 'coverage'),
    ('model_cacs', "Model's overall CACS@k (%)",
     "The model's CACS@k over all its responses.", 'coverage'),
    ('cacs_deviation', 'Difference (points)',
     "The model's CACS@k in the stratum minus its overall CACS@k, in percentage points: above 0, the model does "
     "better on these cases than overall.", 'coverage'),
    ('length_chars', 'Length (characters)',
     "The response's length in characters.", 'scores'),
    # counts
    ("human_items", "Human items", "Held-out items the human reference scores at this level (its score snapped to "
     "the scale).", "scores"),
    ("raw_items", "Raw judge items", "Held-out items the judge, as it is, scores at this level (snapped to the scale).",
     "scores"),
    ("calibrated_items", "Calibrated judge items", "Held-out items the calibrated judge scores at this level: the "
     "judge's scores mapped onto the human distribution by a map fitted on the other items.", "scores"),
    ("overall", "HealthBench score", "Per example, the points of the met rubric items over the positive points (below 0 "
     "when penalties outweigh); the mean over the examples, clipped to 0–1.", "scores"),
    ("bootstrap_std", "Bootstrap std", "The standard deviation of the score over 1,000 seeded resamples of the examples "
     "with replacement.", "scores"),
    ("n_examples", "Examples", "Graded completions the figure averages (one per grading of a response).", "counts"),
    ("judge_model", "Judge's model", "The model behind the judge, which may also be one of the graded models.", "judges"),
    ("attributed_judge", "Attributed judge", "The judge that was told which model wrote each answer.", "judges"),
    ("anonymized_judge", "Anonymized judge", "The judge of the same model that was not told who wrote each answer.", "judges"),
    ("attributed", "Self-bias, attributed", "The judge's self-bias when it is told which model wrote each answer.", "judges"),
    ("anonymized", "Self-bias, anonymized", "The judge's self-bias when it is not told which model wrote each answer.",
     "judges"),
    ("attenuation", "Attenuation", "1 − |anonymized self-bias| / |attributed self-bias|: the share of the self-bias that "
     "hiding the answer's author removes (1: all of it, 0: none, below 0: hiding made it larger).", "judges"),
    ("ppi_estimate", "Prediction-powered estimate", "The humans' figure estimated from the judge on every response, "
     "corrected by the difference between humans and judge on the labelled responses (PPI++: the correction is weighted "
     "so that an uninformative judge falls back to the humans alone). Unbiased when the labelled responses are a "
     "random sample.", "ppi"),
    ("ppi_ci", "Prediction-powered 95% interval", "The 95% interval of the prediction-powered estimate (normal "
     "approximation). Narrower than the humans' own when the judge tracks the humans.", "ppi"),
    ("human_only", "Humans alone", "The mean over the labelled responses of the human source's figure: what the "
     "human labels give without the judge.", "ppi"),
    ("human_only_ci", "Humans-alone 95% interval", "The 95% interval of the humans-alone mean (normal approximation).",
     "ppi"),
    ("judge_only", "Judge alone", "The judge's mean over every response it decided: cheap, but biased by however much "
     "the judge differs from the humans.", "ppi"),
    ("n_labelled", "Labelled responses", "Responses with both a human and a judge figure.", "ppi"),
    ("n_unlabelled", "Unlabelled responses", "Responses with a judge figure only.", "ppi"),
    ("effective_n", "Worth in human labels", "How many human labels alone would give an interval as narrow as the "
     "prediction-powered one: labelled responses × (humans-alone width / prediction-powered width)².", "ppi"),
    ("routed_estimate", "Estimate", "The humans' figure over every response the judge decided, from the judge's figure "
     "on all of them corrected by the labelled responses, each labelled response weighted by the inverse of its "
     "chance of being drawn: unbiased whether the labels were drawn uniformly or routed.", "ppi"),
    ("routed_ci", "95% interval", "The 95% interval of the estimate (normal approximation).", "ppi"),
    ("ci_width", "Interval width", "The width of the 95% interval: what a target width is compared with.", "ppi"),
    ("n_responses", "Responses", "Responses the judge decided: the population the estimate is about.", "ppi"),
    ("labelled_budget", "Responses labelled", "A labelling budget: how many responses the humans label.", "ppi"),
    ("uniform_width", "Width, uniform", "The predicted 95% interval width when that many responses are drawn uniformly "
     "at random, predicted from the labels in hand.", "ppi"),
    ("routed_width", "Width, routed", "The predicted 95% interval width when that many responses are drawn with "
     "probabilities that favour those the judges are unsure about, predicted from the labels in hand.", "ppi"),
    ("n", "n", "How many items the figure rests on.", "counts"),
    ("n_cases", "Cases", "Cases the figure rests on.", "counts"),
    ("mean", "Mean", "The mean of the values.", "counts"),
    ("minimum", "Lowest", "The lowest of the values.", "counts"),
    ("lower_quartile", "Lower quartile", "A quarter of the values lie at or below it (linear interpolation between "
     "values).", "counts"),
    ("median", "Median", "Half of the values lie at or below it, half at or above.", "counts"),
    ("upper_quartile", "Upper quartile", "Three quarters of the values lie at or below it (linear interpolation between "
     "values).", "counts"),
    ("maximum", "Highest", "The highest of the values.", "counts"),
    ("n_decisions", "Decisions", "Paired (response, criterion) decisions the figure rests on.", "counts"),
    ("n_responses", "Responses", "Responses the figure rests on.", "counts"),
    ("n_items", "Items", "Items (response, criterion) the figure rests on.", "counts"),
    ("n_binary", "Binary decisions", "Decisions on binary (met / not met) criteria.", "counts"),
    ("n_ordinal", "Ordinal decisions", "Decisions on ordinal criteria.", "counts"),
    ("a", "A (reference)", "The reference source, taken as the truth.", "counts"),
    ("b", "B (compared)", "The source compared with the reference.", "counts"),
    ("reference", "Reference", "The source taken as the truth.", "counts"),
    ("source", "Source", "Whose decisions: a cohort of annotators, a judge, or the gold set.", "counts"),
    ("cohort", "Cohort", "An independent group of annotators; its decision is the majority of its members.",
     "counts"),
    ("kind", "Kind", "What is compared: two human cohorts, a judge against humans, or a criterion kind.", "counts"),
    ("model", "Model", "The model that wrote the responses.", "counts"),
    ("response", "Response", "The response's id.", "counts"),
    ("response_id", "Response", "The response's id.", "counts"),
    ("case_id", "Case", "The case's id.", "counts"),
]
TERMS: dict[str, Term] = {key: Term(key, words, definition, group) for key, words, definition, group in _TERMS}

_CI = re.compile(r"^(?P<base>.+) 95% CI$")
_VS = re.compile(r"^(?P<base>[a-z_0-9]+) vs (?P<other>.+)$")
_SPREAD = re.compile(r"^(?P<base>.+) \((?:μ ± σ|mean ± sd)\)$")


def term_for(column: str) -> Term | None:
    """The term a column shows, with words and definition; None for a column named after data
    (a model, a source)."""
    if column in TERMS:
        return TERMS[column]
    if match := _CI.match(column):
        base = term_for(match["base"])
        words = base.words if base else match["base"]
        return Term(column, f"{words} 95% interval", f"The bootstrap 95% interval of {words} (cases resampled, seeded).",
                    base.group if base else "counts")
    if (match := _VS.match(column)) and match["base"] in TERMS:
        base = TERMS[match["base"]]
        return Term(column, f"{base.words} vs {match['other']}",
                    f"{base.definition} Here against {match['other']} as the reference.", base.group)
    if match := _SPREAD.match(column):
        return Term(column, f"{match['base']} (mean ± sd)",
                    f"{match['base']}: the mean over the samples, with the standard deviation between samples.",
                    "judges")
    return None


def worded_table(columns: list[str], rows: list[list], *, words: dict[str, str] | None = None) -> dict:
    """A report table whose headers this table words itself (``words``: a column's words in this
    table only, e.g. "CACS@3 in the stratum (%)"), each with its term's definition; the CSV keeps
    ``columns``. Tables without ``headers`` are worded from the glossary when shown."""
    from .inputs import report_table  # lazy: inputs loads pandas, which the help page and the headers never need

    table = report_table(columns, rows)
    headers = []
    for column in columns:
        term = term_for(column)
        headers.append([(words or {}).get(column) or (term.words if term else column), term.definition if term else ""])
    table["headers"] = headers
    return table


def glossary() -> list[tuple[str, list[Term]]]:
    """The help page's sections: every term by group, in the groups' order."""
    return [(title, sorted((t for t in TERMS.values() if t.group == group), key=lambda t: t.words.lower()))
            for group, title in GROUPS.items()]


def strategies() -> list[tuple[str, str]]:
    """The cannot-assess strategies with what each does."""
    from grading.metrics.strategies import STRATEGY_HELP  # lazy: the strategies module brings pandas; the help page only

    return [(strategy.value, text) for strategy, text in STRATEGY_HELP.items()]
