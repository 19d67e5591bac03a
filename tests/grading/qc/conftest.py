"""A study built for quality control: six cases with their own binary rubrics, three screening
models (m-a, m-b, m-c), one model that is never screened (m-d) and a physician, labelled by one
annotator of cohort ``group-1`` (whose verdicts are the cohort's decisions).

Bundle order (= case order) is q4, q1, q2, q3, q5, q6, so case order differs from id order.
Hits s/N of each response under ``cohort:group-1``:

    case  N   m-a  m-b  m-c          m-d  physician   mean of m-a, m-b, m-c (percent)
    q4    3   3    -    -            0    -           100
    q1    2   2    1    1            -    -           (100 + 50 + 50) / 3 = 66.67
    q2    4   2    2    2            -    -           50
    q3    4   2    1    0            -    -           (50 + 25 + 0) / 3 = 25
    q5    2   0    1    undecided    2    -           (0 + 50) / 2 = 25 (m-c has no decision)
    q6    4   -    -    -            1    3           not screened

Model-authored responses with a decision: 2 + 3 + 3 + 3 + 3 + 1 = 15.
"""
import pytest

from tests.bundles import write_bundle

N = {"q4": 3, "q1": 2, "q2": 4, "q3": 4, "q5": 2, "q6": 4}
HITS = {
    ("q4", "m-a"): 3, ("q4", "m-d"): 0,
    ("q1", "m-a"): 2, ("q1", "m-b"): 1, ("q1", "m-c"): 1,
    ("q2", "m-a"): 2, ("q2", "m-b"): 2, ("q2", "m-c"): 2,
    ("q3", "m-a"): 2, ("q3", "m-b"): 1, ("q3", "m-c"): 0,
    ("q5", "m-a"): 0, ("q5", "m-b"): 1, ("q5", "m-c"): None, ("q5", "m-d"): 2,
    ("q6", "m-d"): 1, ("q6", "physician"): 3,
}
SCREENING = ["m-a", "m-b", "m-c"]


def qc_parts() -> dict:
    project = {"slug": "qc", "name": "QC study", "blind": True, "coverage_k": 1, "rubric": [],
               "cohorts": [{"name": "group-1"}], "judges": []}
    cases = [{"case_id": case, "prompt": f"Question {case}", "metadata": {"difficulty": "medium"},
              "criteria": [{"criterion_id": f"{case}-{i}", "text": f"Point {i} of {case}"} for i in range(n)]}
             for case, n in N.items()]
    responses, labels = [], []
    for (case, model), hits in HITS.items():
        response_id = f"{case}-{model}"
        responses.append({"response_id": response_id, "case_id": case, "model": model, "text": f"Answer of {model}",
                          **({"author_kind": "human"} if model == "physician" else {})})
        if hits is None:
            continue
        labels += [{"response_id": response_id, "criterion_id": f"{case}-{i}", "cohort": "group-1", "annotator": "ann1",
                    "role": "annotator", "verdict": "met" if i < hits else "not_met"} for i in range(N[case])]
    return {"project": project, "cases": cases, "responses": responses, "labels": labels, "judgments": []}


@pytest.fixture
def qc_project(db, tmp_path):
    from annotation.models import Project
    from grading.bundles import bundle_import

    bundle_import(path=write_bundle(tmp_path / "qc-bundle", qc_parts()))
    return Project.objects.get(slug="qc")


@pytest.fixture
def manager(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="lead", password="pw-12345")


@pytest.fixture(autouse=True)
def empty_cache():
    """The local-memory cache outlives each test's rolled-back database; start clean."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
