"""Choosers, not typed names (issue 25, point 3): thresholds, the length penalty and every
parameter of a page without its own template are chosen from lists built from the project, the
lists are full when the page opens, and the URL keeps the choice."""
import re
from html import unescape as html_unescape

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework import serializers

from grading.reports import registry
from grading.reports.inputs import report_table
from grading.reports.registry import Flag, Page, Params, Report, SourceField, choice
from tests.roles import grant


@pytest.fixture
def viewer(mini_project):
    client = Client()
    client.force_login(grant(get_user_model().objects.create_user("chooser"), mini_project, "viewer"))
    return client


def _options(html: str, name: str) -> list[tuple[str, bool, str]]:
    menu = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S).group(1)
    return [(value, bool(selected), html_unescape(text)) for value, selected, text in
            re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', menu)]


def test_coverage_thresholds_are_chosen_from_the_projects_criteria_and_kept_in_the_url(viewer):
    page = viewer.get("/projects/mini/reports/coverage/").content.decode()
    # mini's cases have at most three binary criteria (c1): k runs 1 to 3; the project's k is 2
    assert _options(page, "k") == [("", True, "the project's, else calibrated"), ("1", False, "1"),
                                   ("2", False, "2 (the project's k)"), ("3", False, "3")]
    assert [v for v, _, _ in _options(page, "sensitivity")] == ["1", "2", "3"]
    chosen = viewer.get("/projects/mini/reports/coverage/?k=3&sensitivity=1&sensitivity=2").content.decode()
    assert ("3", True, "3") in _options(chosen, "k")
    assert [v for v, on, _ in _options(chosen, "sensitivity") if on] == ["1", "2"]
    assert 'id="report-error"' not in chosen


def test_coverage_sensitivity_from_a_multiple_select_is_the_same_figure_as_the_commands_list(viewer, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    several = viewer.get("/projects/mini/reports/coverage/", {"sensitivity": ["1", "3"], "format": "csv",
                                                             "table": "sensitivity"})
    listed = viewer.get("/projects/mini/reports/coverage/", {"sensitivity": "1,3", "format": "csv", "table": "sensitivity"})
    assert several.status_code == listed.status_code
    assert several.content == listed.content


def test_the_length_penalty_is_four_numbers_that_name_the_commands_rule(viewer):
    boxes = viewer.get("/projects/mini/reports/scores/", {"penalty_free": "3", "penalty_cap": "8", "penalty_at_cap": "0.2"})
    typed = viewer.get("/projects/mini/reports/scores/", {"length_penalty": "3,8,0.2"})
    assert boxes.status_code == typed.status_code == 200
    html = boxes.content.decode()
    assert 'name="penalty_free"' in html and 'name="penalty_exponent"' in html and 'name="length_penalty"' not in html
    assert boxes.context["params"]["length_penalty"] == typed.context["params"]["length_penalty"] == "3,8,0.2"
    missing = viewer.get("/projects/mini/reports/scores/", {"penalty_free": "3", "penalty_at_cap": "0.2"})
    assert "the length penalty needs cap" in missing.content.decode()
    empty = viewer.get("/projects/mini/reports/scores/", {"penalty_free": "", "penalty_cap": "", "penalty_at_cap": "",
                                                          "penalty_exponent": ""})
    assert empty.context["params"]["length_penalty"] is None and 'id="report-error"' not in empty.content.decode()


class EveryKindParams(Params):
    source = SourceField(spec=True, required=False, allow_null=True, default=None, help_text="whose decisions")
    verdict = choice(["any", "met", "not_met"], what="verdict", default="any", help_text="count only this verdict")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=50, default=10, help_text="rows at most")
    ci = Flag()


def _compute(*, inputs, source=None, verdict="any", limit=10, ci=False) -> dict:
    return {"tables": {"chosen": report_table(["source", "verdict", "n"], [[source or "", verdict, limit]])}}


EVERY_KIND = Report(key="every_kind", title="Every kind", params=EveryKindParams, compute=_compute, intervals=False,
                    cannot_assess="skip",
                    page=Page(params=EveryKindParams, position=300,
                              build=lambda *, project, **params: _compute(inputs=None, **params)))


@pytest.fixture
def every_kind():
    registry.register(EVERY_KIND)
    yield EVERY_KIND
    registry.unregister(EVERY_KIND.key)


def test_a_page_without_a_template_gets_a_control_per_kind_of_parameter(viewer, every_kind):
    html = viewer.get("/projects/mini/reports/every_kind/", {"source": "cohort:group-2", "verdict": "met"}).content.decode()
    sources = _options(html, "source")
    assert ("", False, "(default)") in sources and ("cohort:group-2", True, "cohort:group-2") in sources
    assert {"cohort:group-1", "judge:judge-a", "gold"} <= {v for v, _, _ in sources}  # filled from the project
    assert _options(html, "verdict") == [("any", False, "any"), ("met", True, "met"), ("not_met", False, "not_met")]
    assert re.search(r'<input type="number" name="limit" value="" step="1" min="1" max="50"', html)
    assert '<input type="checkbox" name="ci" value="1">' in html
    assert 'type="text"' not in re.search(r'<form method="get" class="report-params card">(.*?)</form>', html, re.S).group(1)


def test_the_bias_criterion_is_found_by_its_words_from_a_list_filled_when_the_page_opens(viewer):
    html = viewer.get("/projects/mini/reports/bias/").content.decode()
    listed = re.search(r'<datalist id="bias-criteria">(.*?)</datalist>', html, re.S).group(1)
    options = re.findall(r'<option value="([^"]*)" label="([^"]*)"></option>', listed)
    assert options[0] == ("all", "every criterion of one scale, pooled")
    assert ("c1-ecg", "c1-ecg: Recommends an ECG") in options and ("tone", "tone: Tone fits the patient") in options
    assert [v for v, _ in options[1:3]] == ["tone", "length"]  # the criteria every case shares come first


def test_a_project_with_many_case_criteria_lists_only_the_shared_ones(viewer, settings, monkeypatch):
    from grading.templatetags import report_tags

    monkeypatch.setattr(report_tags, "CRITERION_MENU_LIMIT", 3)
    listed = re.search(r'<datalist id="bias-criteria">(.*?)</datalist>',
                       viewer.get("/projects/mini/reports/bias/").content.decode(), re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"', listed) == ["all", "tone", "length"]
