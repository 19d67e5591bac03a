"""Every validation error path of the importer: the message names file, line and field, and
nothing at all is written to the database."""
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Case, Cohort, Criterion, ImportBatch, Label, Project, Response, RubricVersion
from grading.bundles import BundleError, bundle_import
from grading.models import Judge, Judgment
from tests.bundles import bundle_parts, write_bundle

MODELS = (Project, Case, Criterion, RubricVersion, Response, Cohort, Label, Judge, Judgment, ImportBatch)


def counts():
    return {m.__name__: m.objects.count() for m in MODELS} | {"users": get_user_model().objects.count()}


def assert_rejected(tmp_path, parts=None, *, raw=None, match: str):
    before = counts()
    with pytest.raises(BundleError) as info:
        bundle_import(path=write_bundle(tmp_path / "bad", parts, raw=raw))
    assert str(info.value) == match
    assert counts() == before, "a rejected import must write nothing"
    return info.value


def label_line_3(parts, **changes):
    parts["labels"][2].update(changes)
    return parts


@pytest.mark.django_db
class ImportErrorTests:
    def test_unknown_criterion_names_file_line_and_field(self, tmp_path):
        parts = label_line_3(bundle_parts(), criterion_id="x")
        error = assert_rejected(tmp_path, parts, match="labels.jsonl line 3: unknown criterion_id 'x'")
        assert (error.file, error.line, error.field) == ("labels.jsonl", 3, "criterion_id")

    def test_a_quote_not_in_the_response_is_refused_like_on_every_other_path(self, tmp_path):
        parts = label_line_3(bundle_parts(), evidence=["Take two aspirins daily."])
        response = parts["labels"][2]["response_id"]
        error = assert_rejected(tmp_path, parts, match=f"labels.jsonl line 3: the quote 'Take two aspirins daily.' is not "
                                                       f"part of response {response!r}'s text")
        assert (error.line, error.field) == (3, "evidence")

    def test_a_rationale_over_the_cap_is_refused(self, tmp_path):
        parts = label_line_3(bundle_parts(), rationale="x" * 5001)
        error = assert_rejected(tmp_path, parts, match="labels.jsonl line 3: a rationale can be at most 5,000 characters")
        assert error.field == "rationale"

    def test_unknown_response(self, tmp_path):
        parts = label_line_3(bundle_parts(), response_id="nope")
        assert_rejected(tmp_path, parts, match="labels.jsonl line 3: unknown response_id 'nope'")

    def test_unknown_case_in_responses(self, tmp_path):
        parts = bundle_parts()
        parts["responses"][1]["case_id"] = "c9"
        assert_rejected(tmp_path, parts, match="responses.jsonl line 2: unknown case_id 'c9'")

    def test_unknown_cohort(self, tmp_path):
        parts = label_line_3(bundle_parts(), cohort="group-9")
        assert_rejected(tmp_path, parts, match="labels.jsonl line 3: unknown cohort 'group-9' (declare it in project.json)")

    def test_criterion_of_another_case(self, tmp_path):
        parts = bundle_parts()
        parts["labels"][0]["response_id"] = "r3"  # r3 belongs to c2, which uses the project rubric
        assert_rejected(
            tmp_path, parts,
            match="labels.jsonl line 1: criterion_id 'c1-ecg' is not in the rubric of response 'r3''s case",
        )

    def test_verdict_on_ordinal_is_wrong_kind(self, tmp_path):
        parts = bundle_parts()
        line = next(i for i, row in enumerate(parts["labels"]) if row["criterion_id"] == "tone")
        parts["labels"][line] = {**parts["labels"][line], "verdict": "met"}
        parts["labels"][line].pop("option")
        assert_rejected(
            tmp_path, parts, match=f"labels.jsonl line {line + 1}: verdict 'met' given for a ordinal criterion (use option)"
        )

    def test_option_on_binary_is_wrong_kind(self, tmp_path):
        parts = bundle_parts()
        parts["labels"][0].pop("verdict")
        parts["labels"][0]["option"] = "good"
        assert_rejected(tmp_path, parts, match="labels.jsonl line 1: option given for a binary criterion (use verdict)")

    def test_option_label_not_among_options(self, tmp_path):
        parts = bundle_parts()
        line = next(i for i, row in enumerate(parts["labels"]) if row["criterion_id"] == "tone")
        parts["labels"][line]["option"] = "excellent"
        assert_rejected(
            tmp_path, parts,
            match=f"labels.jsonl line {line + 1}: option 'excellent' is not among the options ('poor', 'ok', 'good', 'n/a')",
        )

    def test_value_out_of_range(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"][2]["value"] = 1.5
        assert_rejected(tmp_path, parts, match="judgments.jsonl line 3: value 1.5 is outside the option range 0.0..1.0")

    def test_value_on_nominal_is_refused(self, tmp_path):
        parts = bundle_parts()
        line = next(i for i, row in enumerate(parts["labels"]) if row["criterion_id"] == "length")
        parts["labels"][line].pop("option")
        parts["labels"][line]["value"] = 1
        assert_rejected(tmp_path, parts, match=f"labels.jsonl line {line + 1}: value given for a nominal criterion (use option)")

    def test_bad_verdict(self, tmp_path):
        parts = label_line_3(bundle_parts(), verdict="yes")
        assert_rejected(tmp_path, parts, match="labels.jsonl line 3: verdict 'yes' is not one of met, not_met, cannot_assess")

    def test_missing_decision_on_a_label(self, tmp_path):
        parts = bundle_parts()
        parts["labels"][3].pop("verdict")
        assert_rejected(tmp_path, parts, match="labels.jsonl line 4: missing field 'verdict' (or 'option' / 'value')")

    def test_duplicate_case_id(self, tmp_path):
        parts = bundle_parts()
        parts["cases"].append({"case_id": "c1", "prompt": "again"})
        assert_rejected(tmp_path, parts, match="cases.jsonl line 3: duplicate case_id 'c1'")

    def test_duplicate_response_id(self, tmp_path):
        parts = bundle_parts()
        parts["responses"].append(dict(parts["responses"][0]))
        assert_rejected(tmp_path, parts, match="responses.jsonl line 5: duplicate response_id 'r1'")

    def test_duplicate_criterion_id_across_rubrics(self, tmp_path):
        parts = bundle_parts()
        parts["cases"][1]["criteria"] = [{"criterion_id": "c1-ecg", "text": "again"}]
        assert_rejected(
            tmp_path, parts,
            match="cases.jsonl line 2: duplicate criterion_id 'c1-ecg' (first in cases.jsonl line 1)",
        )

    def test_duplicate_label(self, tmp_path):
        parts = bundle_parts()
        parts["labels"].append(dict(parts["labels"][0]))
        n = len(parts["labels"])
        assert_rejected(tmp_path, parts, match=f"labels.jsonl line {n}: duplicate label for (r1, c1-ecg, ann1)")

    def test_duplicate_judgment(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"].append(dict(parts["judgments"][0]))
        assert_rejected(tmp_path, parts, match="judgments.jsonl line 4: duplicate judgment for (r1, c1-ecg, judge-a, sample 0)")

    def test_malformed_json_line(self, tmp_path):
        parts = bundle_parts()
        text = "".join(json.dumps(row) + "\n" for row in parts["labels"][:4]) + '{"response_id": "r1",\n'
        before = counts()
        with pytest.raises(BundleError) as info:
            bundle_import(path=write_bundle(tmp_path / "bad", parts, raw={"labels.jsonl": text}))
        assert str(info.value).startswith("labels.jsonl line 5: malformed JSON: ")
        assert info.value.line == 5
        assert counts() == before

    def test_malformed_project_json(self, tmp_path):
        assert_rejected(tmp_path, raw={"project.json": "{not json"},
                        match="project.json: malformed JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")

    def test_line_that_is_not_an_object(self, tmp_path):
        assert_rejected(tmp_path, raw={"cases.jsonl": "[1, 2]\n"}, match="cases.jsonl line 1: each line must be a JSON object")

    def test_unknown_field_is_named(self, tmp_path):
        parts = label_line_3(bundle_parts(), verdit="met")
        assert_rejected(tmp_path, parts, match="labels.jsonl line 3: unknown field 'verdit'")

    def test_bad_criterion_in_project_rubric(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["rubric"][0]["kind"] = "scale"
        assert_rejected(tmp_path, parts, match="project.json: rubric[0].kind 'scale' is not one of binary, ordinal, nominal")

    def test_binary_criterion_with_options(self, tmp_path):
        parts = bundle_parts()
        parts["cases"][0]["criteria"][0]["options"] = [{"label": "a", "value": 1}]
        assert_rejected(tmp_path, parts, match="cases.jsonl line 1: a binary criterion takes no options")

    def test_bad_difficulty(self, tmp_path):
        parts = bundle_parts()
        parts["cases"][1]["metadata"]["difficulty"] = "extreme"
        assert_rejected(tmp_path, parts, match="cases.jsonl line 2: metadata.difficulty 'extreme' is not one of low, medium, high")

    def test_annotator_in_two_cohorts(self, tmp_path):
        parts = label_line_3(bundle_parts(), cohort="group-2")  # ann1 is in group-1 on lines 1-2
        assert_rejected(tmp_path, parts, match="labels.jsonl line 3: annotator 'ann1' already belongs to another cohort of this project")

    def test_judgment_condition_conflicts_with_judge(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"][1]["condition"] = "attributed"
        assert_rejected(
            tmp_path, parts,
            match="judgments.jsonl line 2: condition 'attributed' differs from judge 'judge-a''s condition 'anonymized'",
        )

    def test_bad_line_after_good_ones_leaves_existing_project_untouched(self, tmp_path, mini_project):
        before = counts()
        parts = bundle_parts()
        parts["labels"][0]["verdict"] = "not_met"  # a real change, which must not survive...
        parts["judgments"][2]["value"] = 9  # ...because a later line is bad
        with pytest.raises(BundleError):
            bundle_import(path=write_bundle(tmp_path / "bad2", parts))
        assert counts() == before
        label = Label.objects.get(response__external_id="r1", criterion__external_id="c1-ecg", annotator__username="ann1")
        assert label.verdict == "met" and list(label.history.values_list("action", "old")) == [("import", None)]

    def test_bad_judge_setting_is_named(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["judges"][0]["settings"] = {"few_shot": {"cohort": "group-1", "k": 2, "seeds": 1}}
        error = assert_rejected(
            tmp_path, parts, match='project.json: judges[0].settings.few_shot: must be {"cohort": NAME, "k": N, "seed": N, "split": {...}}'
        )
        assert error.field == "judges[0].settings.few_shot"

    def test_panel_judge_is_accepted_in_project_json(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["judges"].append({"name": "panel", "backend": "panel",
                                           "settings": {"members": ["judge-a"], "vote": "majority"}})
        bundle_import(path=write_bundle(tmp_path / "ok", parts))
        assert Judge.objects.get(name="panel").backend == "panel"

    def test_not_a_bundle(self, tmp_path):
        (tmp_path / "x.txt").write_text("hello")
        with pytest.raises(BundleError, match="not a bundle directory or .zip file"):
            bundle_import(path=tmp_path / "x.txt")

    def test_zip_without_project_json(self, tmp_path):
        path = tmp_path / "b.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("cases.jsonl", "")
        with pytest.raises(BundleError, match="b.zip: no project.json in the zip"):
            bundle_import(path=path)



@pytest.mark.django_db
class RangeAndTypeErrorTests:
    """Values the database columns could not hold, and unhashable values where the fast path
    looks things up, are field errors naming the line, not database errors."""

    def test_sample_beyond_the_column(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"][1]["sample"] = 40000
        assert_rejected(tmp_path, parts, match="judgments.jsonl line 2: field 'sample' must be at most 32767")

    def test_token_count_beyond_the_column(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"][2]["tokens_in"] = 2**31
        assert_rejected(tmp_path, parts, match="judgments.jsonl line 3: field 'tokens_in' must be at most 2147483647")

    def test_judge_samples_beyond_the_column(self, tmp_path):
        parts = bundle_parts()
        parts["project"]["judges"][0]["samples"] = 10**6
        assert_rejected(tmp_path, parts, match="project.json: field 'judges[0].samples' must be at most 32767")

    def test_judge_model_that_is_not_a_string(self, tmp_path):
        parts = bundle_parts()
        parts["judgments"][1]["judge_model"] = ["gpt-x"]
        assert_rejected(tmp_path, parts, match="judgments.jsonl line 2: field 'judge_model' must be a string")
