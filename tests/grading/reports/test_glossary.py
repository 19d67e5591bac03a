"""Column headers in words (issue 25, point 4): every report column a page shows is a defined
term, shown in words with its definition on hover, and the help page lists every term, every
cannot-assess strategy and what each report answers, in plain words."""
import json
import re
from pathlib import Path

from django.urls import reverse

from grading.metrics.strategies import CannotAssess
from grading.reports.glossary import TERMS, glossary, term_for

SNAPSHOTS = Path(__file__).parent / "snapshots"
MACHINE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # a column named by the code (data names carry '-', ':', '.')


def _columns(value, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        if isinstance(value.get("columns"), list) and "rows" in value:
            found.update(str(c) for c in value["columns"])
        for inner in value.values():
            _columns(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _columns(inner, found)
    return found


def test_every_column_of_every_pinned_report_page_is_a_defined_term():
    found: set[str] = set()
    for path in SNAPSHOTS.glob("*.json"):
        _columns(json.loads(path.read_text(encoding="utf-8")), found)
    assert len(found) > 50  # the snapshots hold the pages' tables
    undefined = sorted(c for c in found if (MACHINE_NAME.match(c) or c.endswith(" 95% CI")) and term_for(c) is None)
    assert not undefined, f"columns with no words or definition in grading/reports/glossary.py: {undefined}"


def test_derived_columns_are_explained_from_their_term():
    interval = term_for("pass_at_k 95% CI")
    assert interval.words == "Pass@k (%) 95% interval" and "bootstrap" in interval.definition
    versus = term_for("mf1 vs cohort:group-1")
    assert versus.words == "MF1 vs cohort:group-1" and versus.definition.startswith(TERMS["mf1"].definition)
    assert term_for("gpt-4o") is None and term_for("cohort:group-1") is None  # data, not terms


def test_terms_are_plain_words_and_never_cite_the_specification():
    for term in TERMS.values():
        assert term.words and term.definition[-1] in ".?" and "SPEC" not in term.definition
        assert "_" not in term.words, term.key  # words, not the machine name
    assert sum(len(terms) for _, terms in glossary()) == len(TERMS)


def test_a_report_table_shows_words_with_the_definition_on_hover(staff_client, mini_project):
    html = staff_client.get(reverse("report-agreement", args=["mini"])).content.decode()
    assert f'<abbr class="term" title="{TERMS["mf1"].definition}" data-column="mf1">MF1</abbr>' in html.replace("&#x27;", "'")
    assert ">n_decisions<" not in html and ">Decisions</abbr>" in html
    download = staff_client.get(reverse("report-agreement", args=["mini"]), {"format": "csv", "table": "comparisons"})
    assert download.status_code == 200 and '"n_decisions"' in download.content.decode().splitlines()[0]  # machine names


def test_the_help_page_defines_every_term_and_strategy(client, django_user_model):
    assert client.get(reverse("metrics-help")).status_code == 302  # signed-in users only, like every page
    client.force_login(django_user_model.objects.create_user(username="annotator-1", password="pw-12345"))
    page = client.get(reverse("metrics-help"))
    assert page.status_code == 200
    html = page.content.decode()
    for term in TERMS.values():
        assert f'id="term-{term.key}"' in html
    for strategy in CannotAssess:
        assert f"<code>{strategy.value}</code>" in html
    assert "CACS@k (%)" in html and "Agreement between two sources" in html and "SPEC" not in html
    assert "Consensus-deviation" in html  # what each report answers, from its declaration
    assert reverse("metrics-help") in client.get(reverse("home")).content.decode()  # in the top bar

