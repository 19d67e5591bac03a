"""Deterministic synthetic clinical study in the evalsite bundle format.

:func:`generate_clinical` writes a ClinConsensus-style study: clinical cases
(lay or professional vignettes, some as multi-turn chats) with case-specific
binary rubrics (positive items weighted 1-3, penalty items -1 to -3), answers
from several LLMs plus a few physician-written calibration answers, two expert
cohorts that label every answer (``overlap`` annotators each, three by default so
that a cohort's majority rarely ties, plus a checker on a share of answers), and
replayed LLM judges: three judge models, each attributed (told which model wrote
the answer) and anonymized, one of them with three samples per item. Every
(response, criterion) has a hidden true verdict drawn from a latent quality
(model strength + case difficulty + noise); annotators, checkers and judges see
it through noise, much more noise on the "low-agreement" cases, so that
agreement, coverage and adjudication reports have something to find, and a
judge leans towards its own model's answers (more when attributed), so that the
bias matrices show self-preference and its attenuation. The project carries
annotator guidelines and per-criterion guidance (:mod:`demo.clinical_guidance`). Rows are streamed to disk case by
case, so the 2,500-case benchmark never holds the study in memory, and the same
arguments always give the same bytes. Run ``python -m demo.clinical --out DIR``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from demo.bundle_io import BundleWriter
from demo.clinical_cases import MAX_CRITERIA, CaseDraft, build_case
from demo.clinical_guidance import GUIDELINES, criterion_guidance
from demo.clinical_text import PHYSICIAN_STYLE, model_style, render_response

DEFAULT_MODELS = ("gpt-4o", "claude-3.5-sonnet", "llama-3-70b", "gemini-1.5-pro", "mistral-large", "qwen2-72b")
DEFAULT_COHORTS = (
    ("group-1", ("g1-ann1", "g1-ann2", "g1-ann3", "g1-ann4"), "g1-check"),
    ("group-2", ("g2-ann1", "g2-ann2", "g2-ann3"), "g2-check"),
)
PHYSICIAN_MODEL = "physician"


@dataclass(frozen=True)
class JudgeSpec:
    """A replayed judge of the study and how it errs. ``flip``: its error rate per decision
    (``JUDGE_FLIP_LOW_AGREEMENT`` on low-agreement cases); ``leniency``: extra chance of "met"
    where the truth is not met; ``self_preference``: extra chance of "met" on a not-met item
    of its own model's answers; ``sample_flip``: each sample's own extra error rate (samples > 1)."""

    name: str
    model: str
    condition: str = "anonymized"
    samples: int = 1
    temperature: float = 0.0
    flip: float = 0.07
    leniency: float = 0.0
    self_preference: float = 0.0
    sample_flip: float = 0.0

    def project_spec(self) -> dict:
        return {"name": self.name, "backend": "replay", "model": self.model, "condition": self.condition,
                "temperature": self.temperature, "samples": self.samples}


# The demo's judges: three judge models (also answer models), each attributed and anonymized; the
# anonymized Claude judge samples three times at temperature 0.7 (Monte Carlo stability).
DEFAULT_JUDGE = JudgeSpec("gpt-4o-judge", "gpt-4o", "anonymized", self_preference=0.04)
DEFAULT_JUDGES = (
    DEFAULT_JUDGE,
    JudgeSpec("gpt-4o-judge-attributed", "gpt-4o", "attributed", self_preference=0.3),
    JudgeSpec("claude-judge", "claude-3.5-sonnet", "anonymized", samples=3, temperature=0.7, flip=0.05,
              self_preference=0.03, sample_flip=0.04),
    JudgeSpec("claude-judge-attributed", "claude-3.5-sonnet", "attributed", flip=0.05, self_preference=0.25),
    JudgeSpec("llama-judge", "llama-3-70b", "anonymized", flip=0.1, leniency=0.05, self_preference=0.05),
    JudgeSpec("llama-judge-attributed", "llama-3-70b", "attributed", flip=0.1, leniency=0.05, self_preference=0.35),
)

# Latent strength on a logit-like scale; unknown names get a value from their CRC32.
MODEL_STRENGTH = {
    "claude-3.5-sonnet": 1.0,
    "gpt-4o": 0.9,
    "gemini-1.5-pro": 0.75,
    "qwen2-72b": 0.45,
    "mistral-large": 0.4,
    "llama-3-70b": 0.3,
    "gpt-4o-mini": 0.35,
    "deepseek-v2": 0.4,
    "gemma-2-27b": 0.15,
    "claude-3-haiku": 0.1,
    "llama-3-8b": -0.3,
    PHYSICIAN_MODEL: 1.4,
}
DIFFICULTY_OFFSET = {"low": 0.6, "medium": 0.0, "high": -0.7}

# Noise levels (probabilities per decision). Experts rarely slip outside the low-agreement cases,
# so that with three annotators the cohorts mostly agree and adjudication is a minority's work.
ANNOTATOR_FLIP_RANGE = (0.005, 0.025)
COHORT_LENIENCY_STEP = 0.01  # later cohorts mark "met" a little more readily
LOW_AGREEMENT_FLIP = 0.32
CHECKER_FLIP = 0.003
CHECKER_FLIP_LOW_AGREEMENT = 0.15
CANNOT_ASSESS_RATE = 0.004
RATIONALE_RATE = 0.12
JUDGE_FLIP_LOW_AGREEMENT = 0.18
JUDGE_INVALID_RATE = 0.01
ADJUDICATOR = "adjudicator"
_ADJUDICATION_CONFIDENCES = ("certain", "certain", "probable", "uncertain")
_ADJUDICATION_CATEGORIES = ("annotator_slip", "rubric_ambiguity", "implicit_content", "other")

_RATIONALES = {
    "met": ("Clearly stated in the answer.", "Covered in the answer.", "Addressed, although briefly."),
    "not_met": ("Not mentioned anywhere.", "Only implied, not stated.", "Missing from the answer."),
    "cannot_assess": ("Cannot judge this from the text alone.",),
}
_JUDGE_EXPLANATIONS = {
    True: ("The response explicitly covers this item.", "The response states this directly."),
    False: ("The response does not address this item.", "This item is not covered by the response."),
}
_GARBAGE_OUTPUTS = (
    '{"explanation": "The response',
    "I'm sorry, I can't evaluate this response.",
    '```json\n{"criteria_met": maybe}\n```',
    "",
    '{"criteria_met": "unclear"}',
)
def model_strength(model: str) -> float:
    """Latent quality of a source model (deterministic for unknown names)."""
    if model in MODEL_STRENGTH:
        return MODEL_STRENGTH[model]
    return -0.3 + 1.3 * (zlib.crc32(model.encode("utf-8")) % 1000) / 1000


def annotator_flip_rate(username: str) -> float:
    """Per-annotator error rate, fixed by the username."""
    low, high = ANNOTATOR_FLIP_RANGE
    return low + (high - low) * (zlib.crc32(username.encode("utf-8")) % 1000) / 1000


def _pick_cases(seed: int, salt: int, n_cases: int, count: int) -> frozenset[int]:
    count = max(0, min(count, n_cases))
    rng = np.random.default_rng([seed, salt])
    return frozenset(int(i) for i in rng.choice(n_cases, size=count, replace=False))


def _check_arguments(n_cases, n_criteria, models, cohorts, overlap, checker_share, low_agreement_share) -> None:
    if n_cases < 1:
        raise ValueError("n_cases must be at least 1")
    if not 1 <= n_criteria <= MAX_CRITERIA:
        raise ValueError(f"n_criteria must be between 1 and {MAX_CRITERIA}")
    if not models or len(set(models)) != len(models):
        raise ValueError("models must be a non-empty list of distinct names")
    if PHYSICIAN_MODEL in models:
        raise ValueError(f"{PHYSICIAN_MODEL!r} is reserved for the human answers")
    if overlap < 1:
        raise ValueError("overlap must be at least 1")
    names = [c[0] for c in cohorts]
    if len(set(names)) != len(names):
        raise ValueError("cohort names must be distinct")
    users = [u for _, pool, checker in cohorts for u in (*pool, *([checker] if checker else []))]
    if len(set(users)) != len(users):
        raise ValueError("a user may belong to one cohort only, with one role")
    for name, pool, _checker in cohorts:
        if len(pool) < overlap:
            raise ValueError(f"cohort {name} has {len(pool)} annotators, fewer than overlap={overlap}")
    if not 0 <= checker_share <= 1 or not 0 <= low_agreement_share <= 1:
        raise ValueError("checker_share and low_agreement_share must be within [0, 1]")


def _draw_truth(num_rng: np.random.Generator, draft: CaseDraft, authors: list[tuple[str, str]]) -> np.ndarray:
    """Hidden verdicts (responses x criteria) from model strength, difficulty and item ease."""
    n_resp, n_crit = len(authors), len(draft.criterion_ids)
    strengths = np.array([model_strength(m) for m, _ in authors])
    quality = strengths + DIFFICULTY_OFFSET[draft.difficulty] + num_rng.normal(0.0, 0.45, n_resp)
    ease = num_rng.normal(0.0, 0.9, n_crit)
    logit_pos = 1.4 * (quality[:, None] + ease[None, :])
    # Penalty items: weak answers give harmful advice more often, but rarely.
    logit_pen = -2.2 - 1.3 * quality[:, None] + 0.4 * ease[None, :]
    p_met = 1.0 / (1.0 + np.exp(-np.where(draft.positive[None, :], logit_pos, logit_pen)))
    return num_rng.random((n_resp, n_crit)) < p_met


def _draw_labels(num_rng, truth, *, cohorts, overlap, checker_share, low_agreement, flip_rates) -> list[tuple]:
    """Noisy human verdicts: one entry per (cohort, annotator slot) and per checker.

    Each entry is ``(cohort, user per response, role, met, cannot_assess,
    with_rationale, checked responses or None)`` as nested lists.
    """
    n_resp, n_crit = truth.shape
    rows = []
    for cohort_index, (cohort, pool, checker) in enumerate(cohorts):
        leniency = COHORT_LENIENCY_STEP * cohort_index
        # Consecutive annotators from a random start, so pairs mix across responses.
        starts = num_rng.integers(0, len(pool), n_resp)
        for slot in range(overlap):
            users = [pool[(int(s) + slot) % len(pool)] for s in starts]
            if low_agreement:
                flip_met = np.full(n_resp, LOW_AGREEMENT_FLIP)
                flip_not = flip_met
            else:
                flip_met = np.array([flip_rates[u] for u in users])
                flip_not = flip_met + leniency
            flip_p = np.where(truth, flip_met[:, None], flip_not[:, None])
            said_met = truth ^ (num_rng.random((n_resp, n_crit)) < flip_p)
            cannot = num_rng.random((n_resp, n_crit)) < CANNOT_ASSESS_RATE
            explain = num_rng.random((n_resp, n_crit)) < RATIONALE_RATE
            rows.append((cohort, users, "annotator", said_met, cannot, explain, None))
        if checker and checker_share > 0:
            checked = num_rng.random(n_resp) < checker_share
            flip = CHECKER_FLIP_LOW_AGREEMENT if low_agreement else CHECKER_FLIP
            said_met = truth ^ (num_rng.random((n_resp, n_crit)) < flip)
            cannot = num_rng.random((n_resp, n_crit)) < CANNOT_ASSESS_RATE / 3
            explain = num_rng.random((n_resp, n_crit)) < RATIONALE_RATE
            rows.append((cohort, [checker] * n_resp, "checker", said_met, cannot, explain, checked))
    return [(cohort, users, role, v.tolist(), c.tolist(), e.tolist(), None if ch is None else ch.tolist())
            for cohort, users, role, v, c, e, ch in rows]


def _write_labels(write_label, draft: CaseDraft, response_ids, truth_rows, picks, label_rows) -> None:
    criterion_ids, sentences = draft.criterion_ids, draft.sentences
    n_crit = len(criterion_ids)
    for j, rid in enumerate(response_ids):
        met, pick = truth_rows[j], picks[j]
        for row_index, (cohort, users, role, verdicts, cannots, explains, checked) in enumerate(label_rows):
            if checked is not None and not checked[j]:
                continue
            user = users[j]
            v_row, c_row, e_row = verdicts[j], cannots[j], explains[j]
            for k in range(n_crit):
                verdict = "cannot_assess" if c_row[k] else ("met" if v_row[k] else "not_met")
                label = {"response_id": rid, "criterion_id": criterion_ids[k], "cohort": cohort,
                         "annotator": user, "role": role, "verdict": verdict}
                if e_row[k]:
                    options = _RATIONALES[verdict]
                    label["rationale"] = options[(pick[k] + row_index) % len(options)]
                    if verdict == "met" and met[k]:  # only then is the sentence in the text
                        label["evidence"] = [sentences[k]]
                write_label(label)


def _write_judgments(write_judgment, num_rng, draft: CaseDraft, response_ids, models, truth, truth_rows, picks, *,
                     judge: JudgeSpec, low_agreement) -> None:
    """One judge's judgments of a case: ``judge.samples`` per (response, criterion)."""
    criterion_ids, sentences = draft.criterion_ids, draft.sentences
    shape = truth.shape
    flip = JUDGE_FLIP_LOW_AGREEMENT if low_agreement else judge.flip
    own = np.array([m == judge.model for m in models])[:, None]
    # Where the truth is "not met", leniency and (on its own model's answers) self-preference add to the error.
    flip_p = np.where(truth, flip, flip + judge.leniency + judge.self_preference * own)
    base = truth ^ (num_rng.random(shape) < flip_p)
    for sample in range(judge.samples):
        said = base ^ (num_rng.random(shape) < judge.sample_flip) if judge.samples > 1 else base
        said_met = said.tolist()
        invalid = (num_rng.random(shape) < JUDGE_INVALID_RATE).tolist()
        for j, rid in enumerate(response_ids):
            met, pick = truth_rows[j], picks[j]
            for k in range(shape[1]):
                row = {"response_id": rid, "criterion_id": criterion_ids[k], "judge": judge.name,
                       "judge_model": judge.model, "condition": judge.condition, "sample": sample}
                if invalid[j][k]:
                    row.update(verdict=None, explanation="", evidence=[],
                               raw=_GARBAGE_OUTPUTS[(pick[k] + k + sample) % len(_GARBAGE_OUTPUTS)])
                else:
                    is_met = said_met[j][k]
                    explanation = _JUDGE_EXPLANATIONS[is_met][(pick[k] + sample) % 2]
                    row.update(
                        verdict="met" if is_met else "not_met",
                        explanation=explanation,
                        evidence=[sentences[k]] if is_met and met[k] else [],
                        raw=json.dumps({"explanation": explanation, "criteria_met": is_met}),
                    )
                write_judgment(row)


def _write_adjudications(write_adjudication, rng: np.random.Generator, labels: list[dict], truth_of: dict, *,
                         cohorts: tuple[str, ...], share: float) -> None:
    """Adjudicate a ``share`` of a case's disputed items: where the cohorts' decisions differ or
    one is unresolved. The decisions come from the one cohort rule (``cohort_decide``); the
    adjudicator rules the hidden truth."""
    import pandas as pd

    from grading.metrics.decisions import cohort_decide  # pure (no Django); only bench bundles adjudicate

    frame = pd.DataFrame(labels, columns=["response_id", "criterion_id", "cohort", "role", "verdict"])
    frame["option"], frame["value"] = None, np.nan
    decided = cohort_decide(frame, keys=["response_id", "criterion_id", "cohort"])
    decided["verdict"] = decided["verdict"].where(~decided["unresolved"], None)
    by_cohort = decided.pivot(index=["response_id", "criterion_id"], columns="cohort", values="verdict")
    by_cohort = by_cohort.reindex(columns=list(cohorts))
    first = by_cohort.iloc[:, 0]
    disputed = by_cohort.isna().any(axis=1) | by_cohort.ne(first, axis=0).any(axis=1)
    keys = sorted(by_cohort.index[disputed.to_numpy()])
    chosen = sorted(int(i) for i in np.flatnonzero(rng.random(len(keys)) < share))
    for i in chosen:
        rid, cid = keys[i]
        write_adjudication({"response_id": rid, "criterion_id": cid, "verdict": "met" if truth_of[rid, cid] else "not_met",
                            "adjudicator": ADJUDICATOR, "confidence": _ADJUDICATION_CONFIDENCES[i % 4],
                            "category": _ADJUDICATION_CATEGORIES[i % 4], "note": "Checked against the answer text."})


def _annotate_case(row: dict) -> None:
    """What a case carries beyond its draft: guidance on the rubric items that need it, and its
    task themes as HealthBench-style example tags (``theme:NAME``), so the HealthBench score has
    themes to break down by."""
    for criterion in row["criteria"]:
        guidance = criterion_guidance(text=criterion["text"], weight=criterion["weight"], tag=criterion["tags"][-1],
                                      min_evidence=criterion["min_evidence"])
        if guidance:
            criterion["guidance"] = guidance
    row["metadata"]["example_tags"] = [f"theme:{theme.replace(' ', '_')}" for theme in row["metadata"]["task_themes"]]


def _project(*, slug, seed, n_cases, n_criteria, models, cohorts, judges, with_humans, coverage_k, overlap) -> dict:
    judge_models = sorted({j.model for j in judges})
    return {
        "slug": slug,
        "name": "Synthetic clinical study (demo)",
        "description": (
            f"Deterministic synthetic ClinConsensus-style study (seed {seed}): {n_cases} cases with "
            f"{n_criteria} case-specific binary criteria, answers from {len(models)} models"
            f"{' and physicians' if with_humans else ''}, {len(cohorts)} expert cohorts"
            f"{f' and {len(judges)} replayed LLM judges ({len(judge_models)} models)' if judges else ''}. "
            "All content is invented; not medical advice."
        ),
        "blind": True,
        "coverage_k": int(coverage_k),
        "overlap": int(overlap),  # what the demo's labels have: the project page and the assign form say so
        "rubric": [],
        "guidelines": GUIDELINES,
        "cohorts": [{"name": name} for name, _, _ in cohorts],
        "judges": [j.project_spec() for j in judges],
    }


def generate_clinical(
    out_dir,
    *,
    slug: str = "clinical-demo",
    n_cases: int = 40,
    n_criteria: int = 30,
    models: Sequence[str] = DEFAULT_MODELS,
    human_answer_cases: int = 8,
    cohorts: Sequence[tuple[str, Sequence[str], str | None]] = DEFAULT_COHORTS,
    overlap: int = 3,
    checker_share: float = 0.25,
    judges: Sequence[JudgeSpec] = DEFAULT_JUDGES,
    low_agreement_share: float = 0.15,
    seed: int = 7,
    coverage_k: int | None = None,
    adjudication_share: float = 0.0,
) -> dict:
    """Write the synthetic clinical study bundle to ``out_dir``; return a summary.

    ``cohorts`` is a sequence of ``(name, annotator usernames, checker username
    or None)``; ``judges`` the replayed judges (``JudgeSpec``, none: ``()``). Each answer
    gets ``overlap`` annotators per cohort (labelling all its criteria) and,
    for a ``checker_share`` of answers, the cohort's checker too. With
    ``coverage_k=None`` the project's k is calibrated like ClinConsensus: the
    rounded mean number of criteria truly met by the physician answers (by all
    answers when there are none). The summary holds the row counts plus
    ``coverage_k``, ``low_agreement_cases`` and ``human_answer_cases`` (case ids). With
    ``adjudication_share`` > 0 (and two cohorts or more) an ``adjudications.jsonl`` holds the
    adjudicator's decision on that share of the disputed items (the cohorts' decisions differ).
    """
    models = tuple(models)
    judges = tuple(judges)
    cohorts = tuple((name, tuple(pool), checker) for name, pool, checker in cohorts)
    _check_arguments(n_cases, n_criteria, models, cohorts, overlap, checker_share, low_agreement_share)
    if not 0 <= adjudication_share <= 1:
        raise ValueError("adjudication_share must be within [0, 1]")
    human_cases = _pick_cases(seed, 1, n_cases, human_answer_cases)
    low_cases = _pick_cases(seed, 2, n_cases, round(low_agreement_share * n_cases))
    width = max(4, len(str(n_cases)))
    flip_rates = {user: annotator_flip_rate(user) for _, pool, _ in cohorts for user in pool}
    hits = {"human": [0, 0], "all": [0, 0]}  # [sum of true hits, responses]

    with BundleWriter(out_dir) as writer:
        for case_index in range(n_cases):
            case_id = f"case-{case_index + 1:0{width}d}"
            # Separate generators per case: text choices and numeric draws never shift each other.
            text_rng = random.Random(f"clinical:{seed}:{case_index}")
            num_rng = np.random.default_rng([seed, 1000 + case_index])
            low_agreement = case_index in low_cases
            draft = build_case(text_rng, case_id, n_criteria)
            _annotate_case(draft.row)
            writer.case(draft.row)

            authors = [(m, "model") for m in models]
            if case_index in human_cases:
                authors.append((PHYSICIAN_MODEL, "human"))
            text_rng.shuffle(authors)  # blind: the response number says nothing about the model
            truth = _draw_truth(num_rng, draft, authors)
            truth_rows = truth.tolist()
            response_ids = [f"{case_id}-r{j + 1:02d}" for j in range(len(authors))]
            for j, (model, kind) in enumerate(authors):
                met = truth_rows[j]
                actions = [s for s, a, m in zip(draft.sentences, draft.is_action, met) if a and m]
                notes = [s for s, a, m in zip(draft.sentences, draft.is_action, met) if not a and m]
                text_rng.shuffle(actions)  # penalty advice lands anywhere in the list
                style = PHYSICIAN_STYLE if kind == "human" else model_style(model)
                text = render_response(text_rng, style=style, register=draft.register, topic=draft.topic,
                                       action_sentences=actions, note_sentences=notes)
                writer.response({"response_id": response_ids[j], "case_id": case_id, "model": model,
                                 "text": text, "author_kind": kind})
                for key in ("all", "human") if kind == "human" else ("all",):
                    hits[key][0] += sum(met)
                    hits[key][1] += 1

            label_rows = _draw_labels(num_rng, truth, cohorts=cohorts, overlap=overlap, checker_share=checker_share,
                                      low_agreement=low_agreement, flip_rates=flip_rates)
            picks = num_rng.integers(0, 3, truth.shape).tolist()  # phrasing choices
            if adjudication_share > 0 and len(cohorts) > 1:
                case_labels: list[dict] = []

                def write_label(label, _write=writer.label, _keep=case_labels.append):
                    _write(label)
                    _keep(label)

                _write_labels(write_label, draft, response_ids, truth_rows, picks, label_rows)
                truth_of = {(rid, cid): truth_rows[j][k] for j, rid in enumerate(response_ids)
                            for k, cid in enumerate(draft.criterion_ids)}
                _write_adjudications(writer.adjudication, np.random.default_rng([seed, 3000 + case_index]), case_labels,
                                     truth_of, cohorts=tuple(c[0] for c in cohorts), share=adjudication_share)
            else:
                _write_labels(writer.label, draft, response_ids, truth_rows, picks, label_rows)
            models_of = [m for m, _ in authors]
            for judge in judges:
                _write_judgments(writer.judgment, num_rng, draft, response_ids, models_of, truth, truth_rows, picks,
                                 judge=judge, low_agreement=low_agreement)

        if coverage_k is None:
            total, count = hits["human"] if hits["human"][1] else hits["all"]
            coverage_k = min(n_criteria, max(1, round(total / count)))
        counts = writer.finish(_project(slug=slug, seed=seed, n_cases=n_cases, n_criteria=n_criteria, models=models,
                                        cohorts=cohorts, judges=judges, with_humans=bool(human_cases),
                                        coverage_k=coverage_k, overlap=overlap))
    counts.update(
        coverage_k=int(coverage_k),
        low_agreement_cases=[f"case-{i + 1:0{width}d}" for i in sorted(low_cases)],
        human_answer_cases=[f"case-{i + 1:0{width}d}" for i in sorted(human_cases)],
    )
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.clinical", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="bundle directory to write")
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--criteria", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--slug", default="clinical-demo")
    parser.add_argument("--no-judge", action="store_true", help="leave out the replayed judges")
    args = parser.parse_args(argv)
    summary = generate_clinical(args.out, slug=args.slug, n_cases=args.cases, n_criteria=args.criteria,
                                seed=args.seed, judges=() if args.no_judge else DEFAULT_JUDGES)
    counts = {k: v for k, v in summary.items() if isinstance(v, int)}
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
