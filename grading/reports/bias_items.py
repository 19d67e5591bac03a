"""Which (response, criterion) items the judges of a bias matrix scored, and the rows on the items
they share (``bias_matrix --shared-items``): sets of millions of items as sorted int64 codes."""
import numpy as np
import pandas as pd


def item_codes(rows: pd.DataFrame) -> np.ndarray:
    """One int64 per row naming its (response, criterion) item: set operations on millions of
    items as numpy arrays, not Python tuples (at full scale the tuples took seconds and 700 MB)."""
    return (rows["response"].to_numpy(dtype=np.int64) << 32) | rows["criterion_id"].to_numpy(dtype=np.int64)


def judged_items(frames: list[pd.DataFrame], names: list[str]) -> dict[str, np.ndarray]:
    """The items (``item_codes``, sorted and unique) each judge scored among the rows of ``frames``."""
    found: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for rows in frames:
        codes = item_codes(rows)
        for name, positions in rows.groupby("judge", sort=False, observed=True).indices.items():
            if name in found:
                found[name].append(codes[positions])
    return {name: np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
            for name, parts in found.items()}


def shared_items_of(items: dict[str, np.ndarray]) -> np.ndarray:
    found = list(items.values())
    shared = found[0] if found else np.empty(0, dtype=np.int64)
    for other in found[1:]:
        shared = np.intersect1d(shared, other, assume_unique=True)
    return shared


def within(rows: pd.DataFrame, ids: set) -> pd.DataFrame:
    """The rows on the criteria ``ids``: ``rows`` itself, not a copy, when that is all of them."""
    kept = rows["criterion_id"].isin(ids)
    return rows if kept.all() else rows[kept]


def on_items(rows: pd.DataFrame, items: np.ndarray) -> pd.DataFrame:
    return rows[np.isin(item_codes(rows), items)] if len(rows) else rows


def item_coverage(items: dict[str, np.ndarray], *, shared_items: bool) -> tuple[dict, list[str]]:
    """How the judges' items compare: ``item_coverage`` of the output and the warning when the cells rest
    on different items (a judge scored items another did not, so their cells are means over
    different responses)."""
    n_every = len(np.unique(np.concatenate(list(items.values())))) if items else 0
    n_shared = len(shared_items_of(items))
    summary = {"shared_items": shared_items, "same_items": all(len(found) == n_every for found in items.values()),
               "n_items_union": n_every, "n_items_shared": n_shared,
               "n_items_by_judge": {name: len(found) for name, found in items.items()}}
    if summary["same_items"]:
        return summary, []
    per_judge = ", ".join(f"{name} {len(found):,}" for name, found in items.items())
    if shared_items:
        return summary, [f"restricted to the {n_shared:,} items every judge scored (of {n_every:,} scored by any: "
                         f"{per_judge}); each cell's n counts them"]
    return summary, [f"the cells rest on different items: the judges scored {per_judge} of {n_every:,} items, "
                     f"{n_shared:,} of them by every judge; each cell's n says how many it averages. Ask for shared "
                     "items (--shared-items) to compare every judge on the same items"]
