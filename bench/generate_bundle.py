"""Generate a benchmark-scale clinical bundle: ``python -m bench.generate_bundle --out DIR``.

Calls :func:`demo.clinical.generate_clinical` with the benchmark parameters:
``--cases`` cases (default 250) × 30 case-specific binary criteria, answers from
``--models`` LLMs (default 11, no physician answers), two cohorts that each
label every (response, criterion) exactly once (overlap 1, no checkers) and one
replayed judge with one sample. At the defaults that is exactly 2,750
responses, 165,000 labels (82,500 per cohort) and 82,500 judgments. Prints one
JSON object with the counts, the output path and the generation time.

``--full`` writes the full-scale study of issue 26 instead (``generate_full_bundle``), with
``--scale`` the fraction of its 2,500 cases: 11 models × 30 criteria, two cohorts of overlap 2
with a checker on 10% of responses (about 3.4 M labels), three judges, one of them with three
samples (about 4.1 M judgments), strata metadata on every case, and adjudications of 5% of the
disputed items. Rows are streamed to disk case by case, as for the default bundle.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from demo.bundle_io import zip_bundle
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGE, DEFAULT_JUDGES, DEFAULT_MODELS, generate_clinical

BENCH_MODELS = DEFAULT_MODELS + (
    "gpt-4o-mini",
    "claude-3-haiku",
    "llama-3-8b",
    "gemma-2-27b",
    "deepseek-v2",
    "command-r-plus",
    "phi-3-medium",
    "yi-large",
    "mixtral-8x22b",
)
BENCH_CRITERIA = 30
FULL_CASES = 2500
# The full-scale study: gpt-4o anonymized and attributed (one sample each), claude anonymized with three.
FULL_JUDGES = tuple(j for j in DEFAULT_JUDGES if j.name in ("gpt-4o-judge", "gpt-4o-judge-attributed", "claude-judge"))
FULL_OVERLAP = 2
FULL_CHECKER_SHARE = 0.1
FULL_ADJUDICATION_SHARE = 0.05


def bench_models(count: int) -> tuple[str, ...]:
    """The first ``count`` benchmark model names (extra ones are numbered)."""
    if count < 1:
        raise ValueError("--models must be at least 1")
    names = list(BENCH_MODELS[:count])
    names += [f"bench-model-{i:02d}" for i in range(len(names) + 1, count + 1)]
    return tuple(names)


def generate_bench_bundle(out_dir, *, n_cases: int = 250, n_models: int = 11, seed: int = 1) -> dict:
    """Generate the benchmark bundle into ``out_dir`` and return the row counts."""
    summary = generate_clinical(
        out_dir,
        slug=f"bench-{n_cases}",
        n_cases=n_cases,
        n_criteria=BENCH_CRITERIA,
        models=bench_models(n_models),
        human_answer_cases=0,
        cohorts=DEFAULT_COHORTS,
        overlap=1,
        checker_share=0.0,
        judges=(DEFAULT_JUDGE,),
        seed=seed,
    )
    return {k: v for k, v in summary.items() if isinstance(v, int)}


def full_cases(scale: float) -> int:
    """The number of cases of the full-scale study at ``scale`` (a fraction of its 2,500)."""
    if not 0 < scale <= 1:
        raise ValueError("--scale must be within (0, 1]")
    return max(1, round(FULL_CASES * scale))


def generate_full_bundle(out_dir, *, scale: float = 1.0, seed: int = 1) -> dict:
    """Generate the full-scale study (issue 26) into ``out_dir`` and return the row counts."""
    n_cases = full_cases(scale)
    summary = generate_clinical(
        out_dir,
        slug=f"bench-full-{n_cases}",
        n_cases=n_cases,
        n_criteria=BENCH_CRITERIA,
        models=bench_models(11),
        human_answer_cases=0,
        cohorts=DEFAULT_COHORTS,
        overlap=FULL_OVERLAP,
        checker_share=FULL_CHECKER_SHARE,
        judges=FULL_JUDGES,
        adjudication_share=FULL_ADJUDICATION_SHARE,
        seed=seed,
    )
    return {k: v for k, v in summary.items() if isinstance(v, int)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generate_bundle", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="bundle directory to write (created if missing)")
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--models", type=int, default=11)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--zip", action="store_true", help="also write DIR.zip (files at the archive root)")
    parser.add_argument("--full", action="store_true", help="the full-scale study of issue 26 (--cases and --models ignored)")
    parser.add_argument("--scale", type=float, default=1.0, help="with --full: the fraction of its 2,500 cases")
    args = parser.parse_args(argv)
    try:
        models = bench_models(args.models)
        if args.full:
            full_cases(args.scale)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.full:
        counts = generate_full_bundle(args.out, scale=args.scale, seed=args.seed)
    else:
        counts = generate_bench_bundle(args.out, n_cases=args.cases, n_models=len(models), seed=args.seed)
    result = {"out": str(Path(args.out)), **counts, "seconds": round(time.perf_counter() - started, 2)}
    if args.zip:
        result["zip"] = str(zip_bundle(args.out))
        result["seconds_with_zip"] = round(time.perf_counter() - started, 2)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
