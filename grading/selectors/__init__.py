"""Reads of the grading app: decisions of every source and the metadata reports join them
with, as DataFrames loaded in one or two queries each.

``decisions``: the decision frame of any source (``source_decisions``; ``cohort_frame``,
``judge_frame``, ``judges_frame``, ``gold_frame``), each computed by the rules of
``grading.metrics.decisions``; ``frames``: responses, cases and criteria; ``fingerprint``:
the cache key part that changes whenever a report's inputs change.
"""
from .decisions import COLUMNS as DECISION_COLUMNS  # noqa: F401 - public name
from .decisions import ITEM as ITEM
from .decisions import cohort_frame as cohort_frame
from .decisions import cohort_frames as cohort_frames
from .decisions import decisions_by_criterion as decisions_by_criterion
from .decisions import evidence_rows as evidence_rows
from .decisions import expert_label_rows as expert_label_rows
from .decisions import gold_decision_frame as gold_decision_frame
from .decisions import gold_frame as gold_frame
from .decisions import judge_frame as judge_frame
from .decisions import judge_hits as judge_hits
from .decisions import judge_sample_outputs as judge_sample_outputs
from .decisions import judges_frame as judges_frame
from .decisions import judgment_rows as judgment_rows
from .decisions import label_rater_counts as label_rater_counts
from .decisions import label_rows as label_rows
from .decisions import panel_members as panel_members
from .decisions import source_decision_records as source_decision_records
from .decisions import source_decisions as source_decisions
from .decisions import source_raters as source_raters
from .fingerprint import project_fingerprint as project_fingerprint
from .frames import applicable_pairs as applicable_pairs
from .frames import case_frame as case_frame
from .frames import case_metadata_lists as case_metadata_lists
from .frames import criterion_frame as criterion_frame
from .frames import fetch_frame as fetch_frame
from .frames import option_range as option_range
from .frames import project_model_names as project_model_names
from .frames import response_frame as response_frame
from .frames import response_links as response_links
