"""The "95% intervals" toggle of the bias and reliability pages (issue 14, point 5), through the
test client on the ``ci`` project of ``test_intervals`` (one 0–4 criterion and one binary
criterion, a cohort and a judge, four cases of two models): with ``ci=1`` the pages show a
"95% CI" column beside each figure that has one, equal to the service's interval and to scipy run
by hand; without it the columns are absent; the CSV download is the table shown."""
import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Project
from grading.bundles import bundle_import
from grading.reports.bias import BIAS_MATRIX
from grading.reports.reliability_report import RELIABILITY_REPORT
from tests.grading.reports.test_intervals import HUMAN, JUDGE, by_hand, two_criteria_bundle
from tests.roles import grant


@pytest.fixture
def ci_client(client, db, tmp_path):
    bundle_import(path=two_criteria_bundle(tmp_path / "ci"))
    user = get_user_model().objects.create_user(username="res", password="pw-12345")
    grant(user, Project.objects.get(slug="ci"), "viewer")
    client.force_login(user)
    return client


def text(pair) -> str:
    return f"{pair[0]:.3f} – {pair[1]:.3f}"


def csv_rows(client, url: str, table: str) -> list[list[str]]:
    response = client.get(url + f"&format=csv&table={table}")
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_reliability_page_shows_intervals_beside_accuracy_and_mean_difference(ci_client):
    url = reverse("report-reliability", args=["ci"]) + "?a=cohort:docs&b=judge:j&by=criterion"
    response = ci_client.get(url + "&ci=1")
    html = response.content.decode()
    assert 'name="ci" value="1" checked' in html
    table = response.context["result"]["tables"]["reliability"]
    columns = table["columns"]
    assert columns[columns.index("accuracy") + 1] == "accuracy 95% CI"
    assert columns[columns.index("mean_difference") + 1] == "mean_difference 95% CI"
    service = RELIABILITY_REPORT.answer(project="ci", a="cohort:docs", b="judge:j", by="criterion", ci=True)
    rows = {row[0]: dict(zip(columns, row)) for row in table["rows"]}
    keys = sorted(HUMAN)
    cases = [c for c, _ in keys]
    pooled = rows["(pooled)"]
    assert pooled["accuracy 95% CI"] == text(service["pooled"]["accuracy_ci"])
    assert pooled["accuracy 95% CI"] == text(by_hand([float(HUMAN[k][1] == JUDGE[k][1]) for k in keys], cases))
    assert pooled["mean_difference 95% CI"] == text(service["pooled"]["mean_difference_ci"])
    assert pooled["mean_difference 95% CI"] == text(by_hand([JUDGE[k][0] - HUMAN[k][0] for k in keys], cases))
    assert rows["grade"]["mean_difference 95% CI"] == text(service["groups"]["grade"]["mean_difference_ci"])
    assert rows["grade"]["accuracy 95% CI"] is None  # no binary pairs on the ordinal criterion: an en dash
    assert rows["safe"]["accuracy 95% CI"] == text(service["groups"]["safe"]["accuracy_ci"])
    assert 'data-column="accuracy 95% CI">Rubric accuracy (%) 95% interval</abbr></th>' in html and pooled["mean_difference 95% CI"] in html
    downloaded = csv_rows(ci_client, url + "&ci=1", "reliability")
    assert downloaded[0] == ["criterion", *columns[1:]]
    assert downloaded[1][columns.index("mean_difference 95% CI")] == pooled["mean_difference 95% CI"]

    plain = ci_client.get(url)
    html = plain.content.decode()
    assert "95% CI" not in html and 'name="ci" value="1">' in html
    assert not any("95% CI" in c for c in plain.context["result"]["tables"]["reliability"]["columns"])
    assert not any("95% CI" in c for c in csv_rows(ci_client, url, "reliability")[0])


def test_bias_page_shows_each_mean_score_beside_its_interval(ci_client):
    url = reverse("report-bias", args=["ci"]) + "?criterion=grade"
    response = ci_client.get(url + "&ci=1")
    html = response.content.decode()
    assert 'name="ci" value="1" checked' in html and "Mean scores S with 95% intervals" in html
    table = response.context["result"]["tables"]["anonymized_scores"]
    assert table["columns"] == ["judge", "m1", "m1 95% CI", "m2", "m2 95% CI"]
    service = BIAS_MATRIX.answer(project="ci", condition="anonymized", reference="cohort:docs", criterion="grade", ci=True)
    (row,) = table["rows"]
    assert row[1] == service["scores"][0][0] and row[3] == service["scores"][0][1]
    assert row[2] == text(service["scores_ci"][0][0]) and row[4] == text(service["scores_ci"][0][1])
    m2 = [k for k in sorted(JUDGE) if k[1] == "m2"]
    assert row[4] == text(by_hand([JUDGE[k][0] for k in m2], [c for c, _ in m2]))
    assert 'id="table-anonymized_scores"' in html and row[4] in html
    downloaded = csv_rows(ci_client, url + "&ci=1", "anonymized_scores")
    assert downloaded[0] == table["columns"] and downloaded[1][4] == row[4]

    plain = ci_client.get(url)
    html = plain.content.decode()
    assert "95% CI" not in html and "Mean scores S with 95% intervals" not in html
    assert plain.context["result"]["tables"]["anonymized_scores"]["columns"] == ["judge", "m1", "m2"]
    assert csv_rows(ci_client, url, "anonymized_scores")[0] == ["judge", "m1", "m2"]


def test_agreement_page_has_the_intervals_toggle_the_readme_promises(ci_client):
    from grading.reports.agreement import AGREEMENT

    url = reverse("report-agreement", args=["ci"]) + "?a=cohort:docs&b=judge:j"
    response = ci_client.get(url + "&ci=1")
    html = response.content.decode()
    assert 'name="ci" value="1" checked' in html
    table = response.context["result"]["tables"]["comparisons"]
    assert table["columns"][-2:] == ["case_mean", "case_mean 95% CI"]
    service = AGREEMENT.answer(project="ci", a="cohort:docs", b="judge:j", ci=True)["summary"]["case_level"]
    row = dict(zip(table["columns"], next(r for r in table["rows"] if r[:2] == ["cohort:docs", "judge:j"])))
    assert row["case_mean"] == pytest.approx(service["mean"]) and row["case_mean 95% CI"] == text(service["mean_ci"])
    low, high = service["mean_ci"]
    assert f"bootstrap 95% interval {low:.3f}–{high:.3f}" in html  # the case-level MF1 of the comparison in depth
    assert csv_rows(ci_client, url + "&ci=1", "comparisons")[0][-1] == "case_mean 95% CI"

    plain = ci_client.get(url)
    html = plain.content.decode()
    assert 'name="ci" value="1">' in html and "95% CI" not in html and "bootstrap 95% interval" not in html
