"""The bare baseline of the agreement benchmark (issue 3, point 6): MF1 and Cohen's kappa
of cohort B against cohort A straight from a bundle's files with json + scikit-learn —
no Django, no database, no pandas.

It applies the same rules as ``manage.py agreement`` with ``--cannot-assess zero``: the
cohort decision is the checker's label, else the single annotator's, else the majority
(a tie is unresolved and counts as a disagreement); cannot_assess is not met; only
binary criteria count. Run: ``python -m bench.bare_agreement BUNDLE --a group-1 --b group-2``.
"""
import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path


def cohort_decisions(labels_path: Path, binary: set[str]) -> dict[str, dict[tuple[str, str], str | None]]:
    """cohort → (response_id, criterion_id) → verdict or None (tie)."""
    votes: dict[str, dict[tuple[str, str], list]] = defaultdict(lambda: defaultdict(list))
    with open(labels_path, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["criterion_id"] in binary:
                votes[obj["cohort"]][(obj["response_id"], obj["criterion_id"])].append(
                    (obj.get("role", "annotator"), obj.get("verdict"))
                )
    result = {}
    for cohort, items in votes.items():
        decided = {}
        for key, rows in items.items():
            checked = [v for role, v in rows if role == "checker"]
            counted = checked or [v for _, v in rows]
            if len(counted) == 1:
                decided[key] = counted[0]
                continue
            top = Counter(counted).most_common()
            decided[key] = top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else None
        result[cohort] = decided
    return result


def binary_criteria(bundle: Path) -> set[str]:
    project = json.loads((bundle / "project.json").read_text(encoding="utf-8"))
    ids = {c["criterion_id"] for c in project.get("rubric") or [] if c.get("kind", "binary") == "binary"}
    with open(bundle / "cases.jsonl", encoding="utf-8") as fh:
        for line in fh:
            for c in json.loads(line).get("criteria") or []:
                if c.get("kind", "binary") == "binary":
                    ids.add(c["criterion_id"])
    return ids


def bare_agreement(bundle: Path, a: str, b: str) -> dict:
    from sklearn.metrics import cohen_kappa_score, f1_score

    decisions = cohort_decisions(bundle / "labels.jsonl", binary_criteria(bundle))
    da, db = decisions[a], decisions[b]
    ya, yb = [], []
    for key, va in da.items():
        if key not in db:
            continue
        vb = db[key]
        x = 1 if va == "met" else 0
        y = 1 if vb == "met" else 0
        if va is None and vb is None:
            x, y = 1, 0
        elif va is None:
            x = 1 - y
        elif vb is None:
            y = 1 - x
        ya.append(x)
        yb.append(y)
    f1_met, f1_not_met = f1_score(ya, yb, labels=[1, 0], average=None)
    return {
        "n_decisions": len(ya),
        "mf1": float((f1_met + f1_not_met) / 2),
        "f1_met": float(f1_met),
        "f1_not_met": float(f1_not_met),
        "cohen_kappa": float(cohen_kappa_score(ya, yb)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bare_agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("--a", default="group-1")
    parser.add_argument("--b", default="group-2")
    args = parser.parse_args(argv)
    print(json.dumps(bare_agreement(Path(args.bundle), args.a, args.b), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
