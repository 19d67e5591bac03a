"""A study with gold for the annotator-quality tests: 20 cases × 2 responses × 3 binary criteria,
cohort group-1 (x1, and later ``careful`` and ``careless``) and group-2 (y1). x1 and y1 label every
response the same way (the truth) and submit, so every response has an agreed gold decision.
``careful`` and ``careless`` then join group-1 with ten regular items each (responses 30-39, which
x1 labelled too), and the manager ``res`` may seed check items."""
import random
from types import SimpleNamespace

import pytest

from tests.annotation.conftest import build_study

CRITERIA = 3


def truth(response_pk: int, position: int) -> str:
    """The one right verdict of a (response, criterion), known from their numbers."""
    return "met" if (response_pk * 7 + position * 3) % 5 < 3 else "not_met"


def label_all(assignment, *, careless_rng: random.Random | None = None, submit: bool = True) -> None:
    """Decide every criterion of ``assignment`` (the truth, or at random) through the write service, then submit."""
    from annotation.assignments import assignment_submit
    from annotation.selectors import criteria_for_response
    from annotation.services import labels_record_batch

    decisions = []
    for criterion in criteria_for_response(response=assignment.response):
        verdict = (careless_rng.choice(["met", "not_met"]) if careless_rng is not None
                   else truth(assignment.response_id, criterion.position))
        decisions.append({"criterion_id": criterion.pk, "verdict": verdict, "expected_revision": 0})
    labels_record_batch(assignment_id=assignment.pk, user=assignment.annotator, decisions=decisions)
    if submit:
        assignment_submit(assignment=assignment, user=assignment.annotator)


def build_gold_study(*, slug: str = "gc") -> SimpleNamespace:
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment, CohortMembership

    study = build_study(slug=slug, n_cases=20, n_criteria=CRITERIA, with_ordinal=False, overlap=1,
                        annotators=(("x1",), ("y1",)))
    for assignment in Assignment.objects.filter(project=study.project).select_related("response", "annotator"):
        label_all(assignment)
    group_1 = study.cohorts[0]
    User = get_user_model()
    for name in ("careful", "careless"):
        user = User.objects.create_user(name, password="pw-12345")
        study.users[name] = user
        CohortMembership.objects.create(project=study.project, cohort=group_1, user=user, role="annotator")
        for position, response in enumerate(study.responses[30:40]):
            Assignment.objects.create(project=study.project, cohort=group_1, response=response, annotator=user,
                                      position=position)
    study.manager = study.users["res"]
    return study


@pytest.fixture
def gold_study(db):
    return build_gold_study()
