"""Generate a benchmark-scale clinical bundle: ``python -m bench.generate_bundle --out DIR``.

Calls :func:`demo.clinical.generate_clinical` with the benchmark parameters:
``--cases`` cases (default 250) × 30 case-specific binary criteria, answers from
``--models`` LLMs (default 11, no physician answers), two cohorts that each
label every (response, criterion) exactly once (overlap 1, no checkers) and one
replayed judge with one sample. At the defaults that is exactly 2,750
responses, 165,000 labels (82,500 per cohort) and 82,500 judgments. Prints one
JSON object with the counts, the output path and the generation time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from demo.bundle_io import zip_bundle
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGE, DEFAULT_MODELS, generate_clinical

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generate_bundle", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="bundle directory to write (created if missing)")
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--models", type=int, default=11)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--zip", action="store_true", help="also write DIR.zip (files at the archive root)")
    args = parser.parse_args(argv)
    try:
        models = bench_models(args.models)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    started = time.perf_counter()
    counts = generate_bench_bundle(args.out, n_cases=args.cases, n_models=len(models), seed=args.seed)
    result = {"out": str(Path(args.out)), **counts, "seconds": round(time.perf_counter() - started, 2)}
    if args.zip:
        result["zip"] = str(zip_bundle(args.out))
        result["seconds_with_zip"] = round(time.perf_counter() - started, 2)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
