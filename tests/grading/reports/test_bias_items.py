"""Bias matrices that say what their cells rest on (issue 25, "figures that mislead").

The "points" project of ``test_bias_native`` (three attributed judges j1–j3 and two anonymized
a1, a2 scoring the same six responses), with three more judges:

- ``j4`` (attributed, model m1) scores only case c1's responses (3 of the 6), 10 points each time;
- ``j0`` (attributed, model m2) has no judgments at all;
- ``a1b`` (anonymized, model m1, like a1) scores every response.

Hand calculation on the 0–10 criterion ``quality``: on c1 every judge's samples are those of
``test_bias_native.SAMPLES``, and j1–j3 give both cases the same points, so on the shared items (c1)
S is unchanged for j1–j3 and j4 = 10 on every target.
"""

import pytest
from django.core.cache import cache

from grading.bundles import bundle_import
from grading.models import Judge
from grading.reports import bias as bias_module
from grading.reports.bias import bias_attenuation
from grading.selectors import decisions
from tests.grading.reports.points import SAMPLES, bias, points_bundle


def _bundle(directory):
    samples = {**SAMPLES, "j4": {"m1": (10, 10), "m2": (10, 10), "m3": (10, 10)},
               "a1b": {"m1": (6, 6), "m2": (6, 6), "m3": (6, 6)}}
    models = {"j1": "m1", "j2": "m2", "j3": "m3", "a1": "m1", "a2": "m2", "j4": "m1", "a1b": "m1", "j0": "m2"}
    return points_bundle(directory, samples=samples, models=models, scored=lambda judge, response: judge != "j0" and (
        judge != "j4" or response["case_id"] == "c1"))


@pytest.fixture
def points(db, tmp_path):
    bundle_import(path=_bundle(tmp_path / "points"))


def test_every_cell_has_its_n_and_the_matrix_says_its_cells_rest_on_different_items(points):
    result = bias("--condition", "attributed", "--criterion", "quality")
    assert result["judges"] == ["j1", "j2", "j3", "j4"]  # j0 is not a row of nulls
    assert result["left_out_judges"] == {"j0": "has no judgments of model-authored responses"}
    assert any(w.startswith("j0 is left out") for w in result["warnings"])
    assert result["counts"] == [[2, 2, 2]] * 3 + [[1, 1, 1]]
    coverage = result["item_coverage"]
    assert coverage == {"shared_items": False, "same_items": False, "n_items_union": 6, "n_items_shared": 3,
                        "n_items_by_judge": {"j1": 6, "j2": 6, "j3": 6, "j4": 3}}
    assert any("the cells rest on different items" in w and "j4 3" in w for w in result["warnings"])


def test_shared_items_restrict_every_judge_to_the_items_all_of_them_scored(points):
    result = bias("--condition", "attributed", "--criterion", "quality", "--shared-items",
                  "--reference", "cohort:panel")
    assert result["counts"] == [[1, 1, 1]] * 4
    assert result["scores"] == [[8.5, 6, 6], [7, 9, 5], [6, 6, 8], [10, 10, 10]]
    assert result["item_coverage"]["shared_items"] is True and result["item_coverage"]["n_items_shared"] == 3
    assert any("restricted to the 3 items every judge scored" in w for w in result["warnings"])
    # the human reference is read on the same (c1) items: experts' means per target are 7, 6, 5 on both cases
    assert result["human_scores"] == {"m1": 7.0, "m2": 6.0, "m3": 5.0}

    same = bias("--condition", "anonymized", "--criterion", "quality", "--shared-items")
    assert same["item_coverage"]["same_items"] is True and not any("items" in w for w in same["warnings"])


def test_attenuation_names_every_pairing_of_judges_of_one_model(points):
    attributed = bias("--condition", "attributed", "--criterion", "quality")
    anonymized = bias("--condition", "anonymized", "--criterion", "quality")
    for result in (attributed, anonymized):
        result["judge_models"] = dict(Judge.objects.filter(project__slug="points").values_list("name", "model"))
    rows = bias_attenuation(attributed=attributed, anonymized=anonymized)
    pairs = [(r["judge_model"], r["attributed_judge"], r["anonymized_judge"]) for r in rows]
    # m1 has two attributed (j1, j4) and two anonymized (a1, a1b) judges: four rows, none picked silently
    assert pairs == [("m1", "j1", "a1"), ("m1", "j1", "a1b"), ("m1", "j4", "a1"), ("m1", "j4", "a1b"),
                     ("m2", "j2", "a2")]
    by_pair = {(r["attributed_judge"], r["anonymized_judge"]): r for r in rows}
    assert by_pair[("j1", "a1")]["attributed"] == attributed["self_bias"]["j1"]
    assert by_pair[("j1", "a1b")]["anonymized"] == anonymized["self_bias"]["a1b"]
    assert by_pair[("j1", "a1")]["attenuation"] == pytest.approx(
        1 - abs(anonymized["self_bias"]["a1"]) / abs(attributed["self_bias"]["j1"]))


def test_the_page_shows_each_cells_n_the_items_and_the_shared_items_switch(client, points):
    from django.contrib.auth import get_user_model
    from django.core.cache import cache

    from annotation.models import Project
    from tests.roles import grant

    cache.clear()
    user = get_user_model().objects.create_user(username="res", password="pw-12345")
    grant(user, Project.objects.get(slug="points"), "viewer")
    client.force_login(user)
    html = client.get("/projects/points/reports/bias/?criterion=quality").content.decode()
    assert 'name="shared_items"' in html and "only items every judge scored" in html
    assert "The cells rest on different items: j1 scored 6, j2 scored 6, j3 scored 6, j4 scored 3 of 6 items" in html
    assert "j0 (has no judgments of model-authored responses)" in html
    assert '"n": 1' in html or '"n":1' in html  # each heatmap cell carries its n (the tooltip's)
    assert "Decisions per cell (n)" in html
    assert "j4" in html and "a1b" in html  # the attenuation table names both judges of m1 in each condition
    shared = client.get("/projects/points/reports/bias/?criterion=quality&shared_items=1").content.decode()
    assert "Restricted to the 3 items every judge scored (of 6)" in shared
    assert 'name="shared_items" value="1" checked' in shared


def test_each_judges_outputs_are_read_once_for_its_decisions_and_its_samples(points, monkeypatch):
    """The matrix needs a judge's decisions (S) and its samples (μ ± σ); both come from one read
    of its judgments (millions of rows at full scale), and give the same matrix."""
    before = bias("--condition", "attributed", "--criterion", "quality")
    reads = []
    original = decisions.judgment_rows

    def counted(**kwargs):
        reads.append(kwargs.get("judge") or kwargs.get("judges"))
        return original(**kwargs)

    monkeypatch.setattr(decisions, "judgment_rows", counted)
    monkeypatch.setattr(bias_module, "judgment_rows", counted)
    cache.clear()
    after = bias("--condition", "attributed", "--criterion", "quality")
    assert sorted(j.name for j in reads) == ["j0", "j1", "j2", "j3", "j4"]
    assert after == before
