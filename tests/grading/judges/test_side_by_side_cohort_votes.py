"""The side-by-side page counts a cohort's votes per (response, criterion) (issue 23, point 3): a
response whose checker reviewed one criterion keeps the annotators' votes on the others."""
from annotation.models import Response
from grading.judges.selectors import side_by_side


def test_a_partly_reviewed_response_keeps_its_vote_counts(mini_project):
    # r1 in group-1: ann1 and ann2 label every criterion; the checker chk1 labelled c1-abx only.
    table = side_by_side(response=Response.objects.get(external_id="r1"))
    cells = {(c.external_id, col.key): cell for c, row in table.rows() for col, cell in row}
    assert cells[("c1-abx", "cohort:group-1")].detail == ""  # the checker's label alone decides it
    assert cells[("c1-ecg", "cohort:group-1")].detail == "2 of 2 labels"
    assert cells[("c1-call", "cohort:group-1")].detail == "2 of 2 labels"
