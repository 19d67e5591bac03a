"""Reads of the grading app: decisions of every source and the metadata reports join them
with, as DataFrames loaded in one or two queries each.

``cohorts``: the cohort decision rule and the gold set (``cohort_decisions``,
``resolve_votes``, ``decision_key``, ``decision_fields``, ``gold_frame``);
``decisions``: the normalized decision frame of any source (``source_decisions``,
``source_raters``); ``frames``: responses, cases and criteria; ``fingerprint``: the cache
key part that changes whenever a report's inputs change.
"""
from .cohorts import KEYS as KEYS
from .cohorts import UNRESOLVED as UNRESOLVED
from .cohorts import cohort_decisions as cohort_decisions
from .cohorts import decision_fields as decision_fields
from .cohorts import decision_key as decision_key
from .cohorts import gold_frame as gold_frame
from .cohorts import resolve_votes as resolve_votes
from .decisions import COLUMNS as DECISION_COLUMNS  # noqa: F401 - public name
from .cohorts import fetch_frame as fetch_frame
from .decisions import frame_from_keys as frame_from_keys
from .decisions import judge_frame as judge_frame
from .decisions import judge_hits as judge_hits
from .decisions import judgment_rows as judgment_rows
from .decisions import source_decisions as source_decisions
from .decisions import source_raters as source_raters
from .fingerprint import project_fingerprint as project_fingerprint
from .frames import applicable_pairs as applicable_pairs
from .frames import case_frame as case_frame
from .frames import criterion_frame as criterion_frame
from .frames import option_range as option_range
from .frames import response_frame as response_frame
