"""Per-model × stratum heatmaps of the coverage page (issue 25, point 2; ClinConsensus Figs. 2, 8, 9):
each cell is the model's CACS@k in the stratum minus its overall CACS@k, with n in the tooltip; themes
and specialties grouped as the project's ``stratum_groups`` setting says, which is checked once and
refused with a message naming what is wrong.

Three cases of four binary criteria, two models, k = 2, hits s (CACS@2 term (s − 1) / 3):

    case  difficulty  themes             m1      m2
    c1    high        triage, dosing     4 (1)   1 (0)
    c2    low         triage             3 (2/3) 2 (1/3)
    c3    low         empathy            2 (1/3) 4 (1)

Overall CACS@2: m1 (1 + 2/3 + 1/3) / 3 = 66.7 %, m2 (0 + 1/3 + 1) / 3 = 44.4 %.
"""
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Project
from annotation.projects import stratum_groups_clean
from grading.bundles import bundle_import
from grading.metrics import deviation_from_overall
from grading.reports.coverage import strata_grouped
from tests.bundles import write_bundle
from tests.roles import grant

HITS = {("c1", "m1"): 4, ("c1", "m2"): 1, ("c2", "m1"): 3, ("c2", "m2"): 2, ("c3", "m1"): 2, ("c3", "m2"): 4}
META = {"c1": {"difficulty": "high", "register": "lay", "task_themes": ["triage", "dosing"], "specialties": ["cardiology"]},
        "c2": {"difficulty": "low", "register": "lay", "task_themes": ["triage"], "specialties": ["pediatrics"]},
        "c3": {"difficulty": "low", "register": "professional", "task_themes": ["empathy"], "specialties": ["pediatrics"]}}
GROUPS = {"task_themes": {"clinical": ["triage", "dosing"]}, "specialties": {"children": ["pediatrics"]}}


def strata_bundle(directory, groups=None):
    cases = [{"case_id": c, "prompt": f"Question {c}", "metadata": META[c],
              "criteria": [{"criterion_id": f"{c}-{j}", "text": f"Point {j}"} for j in range(4)]} for c in META]
    responses = [{"response_id": f"{c}-{m}", "case_id": c, "model": m, "text": "An answer."} for (c, m) in HITS]
    labels = [{"response_id": f"{c}-{m}", "criterion_id": f"{c}-{j}", "cohort": "docs", "annotator": "d1",
               "verdict": "met" if j < HITS[(c, m)] else "not_met"} for (c, m) in HITS for j in range(4)]
    project = {"slug": "strata", "name": "Strata", "coverage_k": 2, "cohorts": [{"name": "docs"}],
               **({"stratum_groups": groups} if groups is not None else {})}
    return write_bundle(directory, {"project": project, "cases": cases, "responses": responses, "labels": labels,
                                    "judgments": []})


@pytest.fixture
def viewer(client, db):
    def log_in():
        user = get_user_model().objects.create_user(username="reader")
        grant(user, Project.objects.get(slug="strata"), "viewer")
        client.force_login(user)
        return client
    return log_in


def _cells(response, axis: str) -> dict:
    return {(c["stratum"], c["model"]): c for c in response.context["result"]["deviations"][axis]["cells"]}


def test_deviation_from_overall_by_hand():
    cells = {("low", "m1"): 50.0, ("high", "m1"): 100.0, ("low", "m2"): None}
    assert deviation_from_overall(cells, {"m1": 66.0, "m2": 40.0}) == {
        ("low", "m1"): -16.0, ("high", "m1"): 34.0, ("low", "m2"): None}
    assert deviation_from_overall({("x", "m3"): 10.0}, {}) == {("x", "m3"): None}  # no overall figure: no difference


def test_strata_grouped_keeps_each_group_once_and_ungrouped_values_as_they_are():
    import pandas as pd

    grouped = strata_grouped(pd.Series([["triage", "dosing"], ["empathy", "triage"], [], None, "triage"]),
                             GROUPS["task_themes"])
    assert grouped.tolist() == [["clinical"], ["clinical", "empathy"], [], [], ["clinical"]]


def test_heatmaps_by_hand_ungrouped(viewer, tmp_path):
    bundle_import(path=strata_bundle(tmp_path / "s"))
    client = viewer()
    response = client.get(reverse("report-coverage", args=["strata"]))
    difficulty = _cells(response, "difficulty")
    # m1 low: (2/3 + 1/3) / 2 = 50 % vs 66.7 %; m2 high: 0 vs 44.4 %
    assert difficulty[("low", "m1")]["deviation"] == pytest.approx(50 - 200 / 3)
    assert difficulty[("high", "m2")]["deviation"] == pytest.approx(-400 / 9) and difficulty[("high", "m2")]["n"] == 1
    themes = _cells(response, "task_themes")
    assert themes[("triage", "m1")]["deviation"] == pytest.approx(100 * 5 / 6 - 200 / 3)  # c1 and c2
    assert themes[("dosing", "m2")]["deviation"] == pytest.approx(-400 / 9)
    html = response.content.decode()
    assert "stratum_groups</code> setting" in html  # how to group, said where it matters
    assert response.context["result"]["deviations"]["difficulty"]["values"] == ["low", "high"]  # their own order
    chart = response.context["charts"]["deviation_difficulty"].spec
    rect = chart["layer"][0]["encoding"]
    assert rect["x"]["title"] == "difficulty" and rect["y"]["title"] == "model (overall CACS)"
    assert rect["color"]["title"] == "points vs overall CACS@2"  # the colour legend's title
    assert rect["color"]["scale"]["domainMid"] == 0
    assert {"field": "n", "title": "n", "format": ","} in rect["tooltip"]
    assert "m1 (66.7 %)" in {c["row"] for c in chart["data"]["values"]}
    rows = client.get(reverse("report-coverage", args=["strata"]), {"format": "csv", "table": "deviation_difficulty"})
    assert rows.content.decode().splitlines()[0] == '"stratum","model","n_responses","cacs","model_cacs","cacs_deviation"'


def test_heatmaps_follow_the_projects_groups(viewer, tmp_path):
    bundle_import(path=strata_bundle(tmp_path / "s", groups=GROUPS))
    client = viewer()
    response = client.get(reverse("report-coverage", args=["strata"]))
    themes = _cells(response, "task_themes")
    assert set(themes) == {("clinical", "m1"), ("clinical", "m2"), ("empathy", "m1"), ("empathy", "m2")}
    # c1 counts once in "clinical" though it lists two of its themes: m1 (1 + 2/3) / 2, m2 (0 + 1/3) / 2
    assert themes[("clinical", "m1")]["n"] == 2
    assert themes[("clinical", "m1")]["deviation"] == pytest.approx(100 * 5 / 6 - 200 / 3)
    assert themes[("clinical", "m2")]["deviation"] == pytest.approx(100 / 6 - 400 / 9)
    assert themes[("empathy", "m2")]["deviation"] == pytest.approx(100 - 400 / 9)
    assert response.context["result"]["deviations"]["specialties"]["words"] == "macro-category"
    assert "grouped into capability families" in response.content.decode()
    # a change of the groups is a change of the figures: the cached page is not served again
    project = Project.objects.get(slug="strata")
    project.stratum_groups = {}
    project.save()
    assert ("triage", "m1") in _cells(client.get(reverse("report-coverage", args=["strata"])), "task_themes")


@pytest.mark.parametrize("value, message", [
    ([], "must be an object"),
    ({"difficulty": {"x": ["low"]}}, "'difficulty' cannot be grouped; use task_themes or specialties"),
    ({"task_themes": ["triage"]}, "stratum_groups.task_themes: must be an object of group names"),
    ({"task_themes": {"clinical": []}}, "stratum_groups.task_themes.clinical: must be a non-empty list"),
    ({"task_themes": {"a": ["triage"], "b": ["triage"]}}, "'triage' is in both 'a' and 'b'"),
])
def test_bad_groups_are_refused_naming_what_is_wrong(value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        stratum_groups_clean(value)


def test_the_admin_form_and_the_import_check_the_groups(db, tmp_path):
    from annotation.admin import ProjectAdminForm

    project = Project.objects.create(slug="p", name="P")
    form = ProjectAdminForm(instance=project, data={**{f: getattr(project, f) for f in ("slug", "name", "overlap",
                                                   "low_agreement_threshold")},
                                                    "stratum_groups": '{"task_themes": {"a": ["x"], "b": ["x"]}}'})
    assert not form.is_valid() and "'x' is in both 'a' and 'b'" in form.errors["stratum_groups"][0]
    assert Project.objects.get(slug="p").stratum_groups == {}
    with pytest.raises(Exception, match="stratum_groups.task_themes: must be an object"):
        bundle_import(path=strata_bundle(tmp_path / "bad", groups={"task_themes": ["triage"]}))
    assert not Project.objects.filter(slug="strata").exists()
