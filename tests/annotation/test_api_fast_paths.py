"""The batch API's direct paths agree with the serializers that document them: every batch item
``decisions_well_formed`` accepts, ``DecisionSerializer`` accepts with the same values (anything
else goes to the serializer, which decides and words the refusal), and ``label_output`` answers
what ``LabelOutputSerializer`` would."""
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.apis import LabelBatchApi, LabelOutputSerializer, decisions_well_formed, label_output
from annotation.models import Label

texts = st.one_of(st.none(), st.text(max_size=30), st.sampled_from(["", " ", " met ", "a\x00b", "x" * 201, "\ud800"]),
                  st.integers(), st.booleans())
numbers = st.one_of(st.none(), st.integers(min_value=-2**70, max_value=2**70), st.floats(allow_nan=True),
                    st.booleans(), st.sampled_from(["3", 3.0, 2**31 - 1, 2**31, -1]))
items = st.fixed_dictionaries({}, optional={
    "criterion": numbers, "revision": numbers, "value": numbers,
    "verdict": st.one_of(st.none(), st.sampled_from(["met", "not_met", "cannot_assess", "", "MET"]), st.integers()),
    "option": texts, "rationale": texts, "evidence_add": texts, "evidence_remove": texts,
    "other": st.integers(),
})


def _serializer_view(item):
    serializer = LabelBatchApi.DecisionSerializer(data=[item], many=True)
    if not serializer.is_valid():
        return None
    [d] = serializer.validated_data
    return {"criterion_id": d["criterion"], "verdict": d.get("verdict"), "option_label": d.get("option"),
            "value": d.get("value"), "rationale": d.get("rationale"), "evidence_add": d.get("evidence_add"),
            "evidence_remove": d.get("evidence_remove"), "expected_revision": d.get("revision")}


@settings(max_examples=600, deadline=None)
@given(items)
def test_well_formed_decisions_agree_with_the_serializer(item):
    fast = decisions_well_formed([item])
    if fast is None:
        return  # the serializer decides
    slow = _serializer_view(item)
    assert slow is not None, item
    [decision] = fast
    for key, value in slow.items():
        if isinstance(value, float) and math.isnan(value):
            raise AssertionError(f"the serializer took NaN for {key}")
        assert decision[key] == value and type(decision[key]) is type(value), (key, item, decision, slow)


def test_plain_batches_take_the_direct_path():
    batch = [{"criterion": 7, "verdict": "met", "revision": 0},
             {"criterion": 8, "option": "good", "rationale": "  as written\n", "revision": 3},
             {"criterion": 9, "value": 2, "evidence_add": "a quote", "revision": 1}]
    assert decisions_well_formed(batch) == [_serializer_view(item) for item in batch]
    assert decisions_well_formed([{"criterion": "7", "verdict": "met", "revision": 0}]) is None  # the serializer's call


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({
    "verdict": st.one_of(st.none(), st.sampled_from(["met", "not_met"])), "option_label": st.one_of(st.none(), st.text()),
    "value": st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 5)),
    "rationale": st.text(), "evidence": st.lists(st.text(), max_size=3), "revision": st.integers(1, 2**31 - 1),
    "criterion_id": st.integers(1, 2**40),
}))
def test_label_output_matches_its_serializer(fields):
    label = Label(**fields)
    assert label_output(label) == LabelOutputSerializer(label).data
