"""Decision frames of every source kind on the ``mini`` project, against the bundle read
by hand (tests/bundles.py): the cohort rule, judge majority over samples, ordinal means,
invalid output counted as not met, missing output, panels, and source parsing."""
import math

import pytest

from annotation.models import Cohort, Criterion, Label, Response
from annotation.services import label_save
from grading import selectors
from grading.models import Judge
from grading.sources import source_parse
from tests.grading.reports.conftest import add_judgments


def frame_of(project, spec):
    source = source_parse(text=spec, project=project)
    responses = selectors.response_frame(project=project)
    criteria = selectors.criterion_frame(project=project)
    frame = selectors.source_decisions(source=source, responses=responses, criteria=criteria)
    ext_r = responses["external_id"].to_dict()
    ext_c = criteria["criterion_external_id"].to_dict()
    return {
        (ext_r[r], ext_c[c]): row
        for r, c, row in zip(frame["response_id"], frame["criterion_id"], frame.to_dict("records"))
    }


def test_cohort_rule_majority_and_option_values(mini_project):
    g1 = frame_of(mini_project, "cohort:group-1")
    assert len(g1) == 11  # 3 responses x 3 binary criteria + r3 x (tone, length)
    assert g1[("r1", "c1-ecg")]["verdict"] == "met" and g1[("r1", "c1-ecg")]["n"] == 2
    assert g1[("r2", "c1-abx")]["verdict"] == "met"
    assert g1[("r3", "tone")]["option"] == "good" and g1[("r3", "tone")]["value"] == 1.0
    assert g1[("r3", "length")]["option"] == "right" and g1[("r3", "length")]["value"] == 1.0
    g2 = frame_of(mini_project, "cohort:group-2")
    assert g2[("r2", "c1-ecg")]["verdict"] == "met" and g2[("r2", "c1-ecg")]["n"] == 1  # single annotator


def _relabel(project, username, response, criterion, verdict, role="annotator"):
    label = Label.objects.select_related("annotator", "cohort").get(
        annotator__username=username, response__external_id=response, criterion__external_id=criterion
    )
    label_save(response=label.response, criterion=label.criterion, cohort=label.cohort, annotator=label.annotator,
               changed_by=None, role=role, verdict=verdict, replace=True)


def test_cohort_tie_is_unresolved_and_checker_wins(mini_project):
    _relabel(mini_project, "ann2", "r2", "c1-call", "met")  # ann1 not_met vs ann2 met: a tie
    _relabel(mini_project, "ann2", "r1", "c1-abx", "met")  # annotators tie, but the checker said not_met
    g1 = frame_of(mini_project, "cohort:group-1")
    tie = g1[("r2", "c1-call")]
    assert tie["verdict"] is None and tie["unresolved"] and tie["n"] == 2
    checked = g1[("r1", "c1-abx")]
    assert checked["verdict"] == "not_met" and not checked["unresolved"] and checked["n"] == 1


def test_checker_overrides_a_unanimous_majority(mini_project):
    cohort = Cohort.objects.get(project=mini_project, name="group-1")
    checker = Label.objects.filter(annotator__username="chk1").first().annotator
    label_save(response=Response.objects.get(external_id="r2"), criterion=Criterion.objects.get(external_id="c1-ecg"),
               cohort=cohort, annotator=checker, changed_by=None, role="checker", verdict="met", replace=True)
    assert frame_of(mini_project, "cohort:group-1")[("r2", "c1-ecg")]["verdict"] == "met"  # both annotators: not_met


def test_judge_invalid_and_missing_output_is_not_met_and_counted(mini_project):
    judge = frame_of(mini_project, "judge:judge-a")
    assert judge[("r1", "c1-ecg")]["verdict"] == "met" and judge[("r1", "c1-ecg")]["invalid"] == 0
    assert judge[("r2", "c1-ecg")]["verdict"] == "not_met" and judge[("r2", "c1-ecg")]["invalid"] == 1  # unparseable
    assert judge[("r1", "c1-call")]["verdict"] == "not_met" and judge[("r1", "c1-call")]["invalid"] == 1  # missing
    assert judge[("r3", "tone")]["value"] == 0.75
    assert judge[("r3", "length")]["verdict"] is None and judge[("r3", "length")]["invalid"] == 1
    assert ("r4", "c1-ecg") not in judge  # r4 was never judged: unmatched, not invalid
    assert sum(row["invalid"] for row in judge.values()) == 6


def test_judge_majority_over_samples_and_ordinal_mean(mini_project):
    judge = Judge.objects.create(project=mini_project, name="mc", model="m", samples=3)
    add_judgments(judge, [
        ("r1", "c1-ecg", 0, "met", None, None, True), ("r1", "c1-ecg", 1, "met", None, None, True),
        ("r1", "c1-ecg", 2, None, None, None, False),
        ("r1", "c1-call", 0, "met", None, None, True), ("r1", "c1-call", 1, "not_met", None, None, True),
        ("r1", "c1-abx", 0, None, None, None, False), ("r1", "c1-abx", 1, None, None, None, False),
        ("r1", "c1-abx", 2, "met", None, None, True),
        ("r3", "tone", 0, None, "ok", 0.5, True), ("r3", "tone", 1, None, "good", 1.0, True),
        ("r3", "tone", 2, None, None, None, False),
        ("r3", "length", 0, None, "short", 0.0, True), ("r3", "length", 1, None, "right", 1.0, True),
        ("r3", "length", 2, None, "right", 1.0, True),
    ])
    mc = frame_of(mini_project, "judge:mc")
    assert mc[("r1", "c1-ecg")]["verdict"] == "met" and mc[("r1", "c1-ecg")]["invalid"] == 1 and mc[("r1", "c1-ecg")]["n"] == 3
    assert mc[("r1", "c1-call")]["verdict"] is None and mc[("r1", "c1-call")]["unresolved"]  # 1-1 tie
    assert mc[("r1", "c1-abx")]["verdict"] == "not_met" and mc[("r1", "c1-abx")]["invalid"] == 2  # invalid = not-met votes
    assert mc[("r3", "tone")]["value"] == pytest.approx(0.75) and mc[("r3", "tone")]["invalid"] == 1
    assert mc[("r3", "length")]["option"] == "right" and mc[("r3", "length")]["value"] == 1.0


@pytest.mark.parametrize("vote, expected", [
    ("any", {"c1-ecg": "met", "c1-call": "met", "c1-abx": "not_met"}),
    ("unanimous", {"c1-ecg": "met", "c1-call": None, "c1-abx": "not_met"}),
    ("majority", {"c1-ecg": "met", "c1-call": None, "c1-abx": "not_met"}),
])
def test_panel_votes_over_member_judges(mini_project, second_judge, vote, expected):
    Judge.objects.create(project=mini_project, name="panel", backend="panel",
                         settings={"members": ["judge-a", "judge-b"], "vote": vote})
    panel = frame_of(mini_project, "judge:panel")
    # r1: judge-a met / not_met (missing) / not_met (missing); judge-b met / met / not_met
    assert {c: panel[("r1", c)]["verdict"] for c in expected} == expected


def test_weighted_panel_follows_the_heavier_member(mini_project, second_judge):
    Judge.objects.create(project=mini_project, name="panel", backend="panel",
                         settings={"members": ["judge-a", "judge-b"], "vote": "weighted", "weights": {"judge-a": 1, "judge-b": 2}})
    assert frame_of(mini_project, "judge:panel")[("r1", "c1-call")]["verdict"] == "met"


def test_gold_is_the_agreed_decision(mini_project):
    gold = frame_of(mini_project, "gold")
    assert gold[("r1", "c1-ecg")]["verdict"] == "met"
    assert ("r2", "c1-ecg") not in gold  # the cohorts disagree and nobody adjudicated: no gold decision yet


@pytest.mark.parametrize("text, message", [
    ("cohort:nobody", "unknown cohort 'nobody' in project 'mini'"),
    ("judge:nobody", "unknown judge 'nobody'"),
    ("crowd", "unknown source 'crowd'"),
    ("nope:cohort:group-1", "unknown project 'nope'"),
    ("", "empty source"),
])
def test_unknown_sources_are_refused_with_one_line(mini_project, text, message):
    with pytest.raises((LookupError, ValueError), match=message):
        source_parse(text=text, project=mini_project)


def test_foreign_source_names_its_project(mini_project):
    source = source_parse(text="mini:cohort:group-2", project=mini_project)
    assert source.kind == "cohort" and source.name == "group-2" and source.foreign
    assert source.spec == "mini:cohort:group-2"


def test_frames_join_case_metadata_and_length(mini_project):
    responses = selectors.response_frame(project=mini_project)
    cases = selectors.case_frame(project=mini_project)
    criteria = selectors.criterion_frame(project=mini_project)
    r1 = responses[responses["external_id"] == "r1"].iloc[0]
    assert r1["length_chars"] == len("Call emergency services now. An ECG is needed.")
    assert cases.loc[r1["case_id"], "task_themes"] == ["emergency"]
    tone = criteria[criteria["criterion_external_id"] == "tone"].iloc[0]
    assert (tone["min_value"], tone["max_value"], tone["na_labels"]) == (0.0, 1.0, frozenset({"n/a"}))
    assert math.isnan(criteria[criteria["criterion_external_id"] == "tone"]["case_id"].astype(float).iloc[0])


def test_adjudication_makes_a_gold_decision(mini_project):
    from grading.models import Adjudication

    Adjudication.objects.create(project=mini_project, response=Response.objects.get(external_id="r2"),
                                criterion=Criterion.objects.get(external_id="c1-ecg"), verdict="met")
    gold = frame_of(mini_project, "gold")
    assert gold[("r2", "c1-ecg")]["verdict"] == "met" and not gold[("r2", "c1-ecg")]["unresolved"]


@pytest.mark.parametrize("spec", ["judge:judge-a", "judge:judge-b"])
def test_judge_hits_counted_in_the_database_equal_the_decision_frame(mini_project, second_judge, spec, monkeypatch):
    from grading.reports import coverage
    from grading.reports.inputs import ReportInputs

    source = source_parse(text=spec, project=mini_project)
    assert selectors.judge_hits(judge=source.obj) is not None  # one sample per item: the fast path applies
    fast = coverage.coverage_compute(inputs=ReportInputs(mini_project), source=source)
    monkeypatch.setattr(selectors, "judge_hits", lambda **kwargs: None)
    generic = coverage.coverage_compute(inputs=ReportInputs(mini_project), source=source)
    assert fast == generic


def _sorted(frame):
    return frame.sort_values(["response_id", "criterion_id"]).reset_index(drop=True)


def test_a_cohort_decided_alone_equals_its_part_of_every_cohorts_pass(mini_project):
    """A report asking for one cohort reads and decides that cohort's labels only; its decisions,
    and every cohort's together (gold's input), are exactly those of the one pass over every
    cohort's labels that the queue and the exporter make (``cohort_frames``)."""
    import pandas as pd

    from grading.reports.inputs import ReportInputs

    one_pass = selectors.cohort_frames(project=mini_project)
    assert set(one_pass["cohort"]) == {"group-1", "group-2"}
    for spec in ("cohort:group-1", "cohort:group-2"):
        source = source_parse(text=spec, project=mini_project)
        alone = ReportInputs(mini_project)
        decided = alone.decisions(source)
        assert set(alone._cohort_rows) == {source.obj.pk}  # the other cohort's labels were not read
        expected = one_pass[one_pass["cohort"] == source.name][selectors.DECISION_COLUMNS]
        assert len(decided)
        pd.testing.assert_frame_equal(_sorted(decided), _sorted(expected), check_dtype=False)
    every = ReportInputs(mini_project).cohort_decisions
    order = ["response_id", "criterion_id", "cohort"]
    pd.testing.assert_frame_equal(every.sort_values(order).reset_index(drop=True)[list(one_pass.columns)],
                                  one_pass.sort_values(order).reset_index(drop=True), check_dtype=False)


def test_a_cohorts_labels_are_read_once_for_its_decisions_and_its_experts_values(mini_project):
    import pandas as pd
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from grading.reports.inputs import ReportInputs

    source = source_parse(text="cohort:group-1", project=mini_project)
    inputs = ReportInputs(mini_project)
    inputs.decisions(source)
    with CaptureQueriesContext(connection) as queries:
        experts = inputs.expert_rows(source.obj)
    assert not [q for q in queries.captured_queries if Label._meta.db_table in q["sql"]]
    expected = selectors.expert_label_rows(cohort=source.obj, criteria=inputs.criteria, response_ids=inputs.responses.index)
    assert len(experts) and (experts["role"] == "annotator").all()
    pd.testing.assert_frame_equal(_sorted(experts), _sorted(expected), check_dtype=False)
