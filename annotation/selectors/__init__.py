"""Reads of the annotation app, each one fetching *and* authorizing (STYLE: fetch-and-authorize).

Independence (SPEC §8) is enforced here: an annotator can reach only their own assignments and
their own labels, a checker only the items and labels of the cohort they check, and nothing
here ever returns judge output. A request for somebody else's object raises ``Http404`` so that
its existence is not revealed either.

``final``: which labels are final (drafts never count).
``work``: "My work", assignments, the labeling page, the rubric of a response; ``review``: the
checker review of one response in one cohort, and the review queue.
"""
from .final import label_check_q as label_check_q
from .final import label_draft_q as label_draft_q
from .final import label_final_q as label_final_q
from .final import labels_check_count as labels_check_count
from .final import labels_draft_count as labels_draft_count
from .final import labels_final as labels_final
from .review import QueueRow as QueueRow
from .review import ReviewItem as ReviewItem
from .review import ReviewRow as ReviewRow
from .review import response_number as response_number
from .review import review_item_get_for_checker as review_item_get_for_checker
from .review import review_page_data as review_page_data
from .review import review_queue_counts as review_queue_counts
from .review import review_queue_disagreements as review_queue_disagreements
from .review import review_queue_for_checker as review_queue_for_checker
from .review import review_queue_rows as review_queue_rows
from .review import review_rows as review_rows
from .work import OPEN_STATUSES as OPEN_STATUSES
from .work import CriterionRow as CriterionRow
from .work import ProjectWork as ProjectWork
from .work import assignment_get_for_annotator as assignment_get_for_annotator
from .work import assignment_next_for_annotator as assignment_next_for_annotator
from .work import assignment_status_bar as assignment_status_bar
from .work import assignments_for_annotator as assignments_for_annotator
from .work import choices_for as choices_for
from .work import criteria_for_response as criteria_for_response
from .work import criterion_get_for_assignment as criterion_get_for_assignment
from .work import criterion_get_for_response as criterion_get_for_response
from .work import decision_display as decision_display
from .work import evidence_missing as evidence_missing
from .work import evidence_missing_text as evidence_missing_text
from .work import items_for_annotator as items_for_annotator
from .work import labeling_page_data as labeling_page_data
from .work import labels_by_criterion as labels_by_criterion
from .work import membership_get as membership_get
from .work import progress_counts as progress_counts
from .work import project_assignment_summary as project_assignment_summary
from .work import work_list_for_user as work_list_for_user
