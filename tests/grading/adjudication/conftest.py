"""The queue project of the adjudication tests: five responses whose cohort disagreements are
worked out by hand (see ``RESPONSES``), a tie inside a cohort (r6), an ordinal dispute (r7), and
case metadata for every queue filter."""
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Project
from grading.bundles import bundle_import
from tests.bundles import write_bundle

M, N, C = "met", "not_met", "cannot_assess"
# response: (case, model, group-1's verdicts on k0..k3, group-2's verdicts)
RESPONSES = {
    "r1": ("c1", "model-a", (M, M, N, N), (M, N, N, N)),  # one disagreement: MF1 = (2/3 + 4/5) / 2 = 0.7333
    "r2": ("c1", "model-b", (M, M, M, N), (N, N, N, M)),  # all four disagree: MF1 = 0
    "r3": ("c2", "model-a", (M, N, M, N), (M, N, M, N)),  # agree: MF1 = 1, nothing disputed
    "r4": ("c2", "model-b", (M, M, M, M), (M, M, M, M)),  # agree on all met: MF1 undefined, nothing disputed
    "r5": ("c3", "model-b", (M, M, M, M), (M, M, M, C)),  # cannot assess counts as not met: MF1 = (6/7 + 0) / 2
}


def queue_parts() -> dict:
    cases, responses, labels = [], [], []
    for i, case in enumerate(("c1", "c2", "c3", "c4")):
        criteria = [{"criterion_id": f"{case}-k{j}", "text": f"Point {j} of {case}", "tags": ["safety:triage" if j == 0 else "content"]}
                    for j in range(4)]
        if case == "c4":
            criteria.append({"criterion_id": "c4-tone", "text": "Tone", "kind": "ordinal",
                             "options": [{"label": "poor", "value": 0}, {"label": "good", "value": 1}]})
        cases.append({"case_id": case, "prompt": f"Question {case}", "criteria": criteria,
                      "metadata": {"difficulty": ("low", "high", "high", "medium")[i], "task_themes": [f"theme-{i % 2}"],
                                   "specialties": ["cardiology" if i < 2 else "pediatrics"]}})
    for response_id, (case, model, g1, g2) in RESPONSES.items():
        responses.append({"response_id": response_id, "case_id": case, "model": model, "text": f"Answer {response_id}"})
        for cohort, annotator, verdicts in (("group-1", "a1", g1), ("group-2", "b1", g2)):
            for j, verdict in enumerate(verdicts):
                labels.append({"response_id": response_id, "criterion_id": f"{case}-k{j}", "cohort": cohort,
                               "annotator": annotator, "verdict": verdict})
    # r6 (c3): both cohorts say all met, but group-2 ties on k0 (b1 met, b2 not met): disputed, MF1 = (6/7 + 0) / 2.
    responses.append({"response_id": "r6", "case_id": "c3", "model": "model-a", "text": "Answer r6"})
    for j in range(4):
        for cohort, annotator in (("group-1", "a1"), ("group-2", "b1")):
            labels.append({"response_id": "r6", "criterion_id": f"c3-k{j}", "cohort": cohort, "annotator": annotator,
                           "verdict": M})
    labels.append({"response_id": "r6", "criterion_id": "c3-k0", "cohort": "group-2", "annotator": "b2", "verdict": N})
    # r7 (c4): binary all met in both (MF1 undefined) but the ordinal tone differs: disputed, sorted last.
    responses.append({"response_id": "r7", "case_id": "c4", "model": "model-a", "text": "Answer r7"})
    for j in range(4):
        for cohort, annotator in (("group-1", "a1"), ("group-2", "b1")):
            labels.append({"response_id": "r7", "criterion_id": f"c4-k{j}", "cohort": cohort, "annotator": annotator,
                           "verdict": M})
    labels += [{"response_id": "r7", "criterion_id": "c4-tone", "cohort": "group-1", "annotator": "a1", "option": "good"},
               {"response_id": "r7", "criterion_id": "c4-tone", "cohort": "group-2", "annotator": "b1", "option": "poor"}]
    project = {"slug": "queue", "name": "Queue", "cohorts": [{"name": "group-1"}, {"name": "group-2"}]}
    return {"project": project, "cases": cases, "responses": responses, "labels": labels, "judgments": []}


@pytest.fixture
def queue_project(db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "queue", queue_parts()))
    return Project.objects.get(slug="queue")


@pytest.fixture
def clock(monkeypatch):
    """The time, moved by hand: every stamp the code takes (``timezone.now``) reads it."""
    now = {"now": timezone.now()}
    monkeypatch.setattr(timezone, "now", lambda: now["now"])

    def later(seconds: float = 60):
        now["now"] += timedelta(seconds=seconds)
    return later
