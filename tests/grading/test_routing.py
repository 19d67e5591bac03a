"""Routed labelling (issue 28, point 2): the design a manager extends (probabilities that favour the
responses the judges split on, one stored draw per response, a budget that only grows, the drawn
responses assigned), the routed report's figures (the inverse-probability weighted estimate of
``metrics.active_mean`` on the design's own probabilities) and plan, its page with the manager's form,
the command and the API."""
import json
from io import StringIO

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Assignment, AuditEvent, Cohort, Project
from demo.clinical import DEFAULT_COHORTS, DEFAULT_JUDGES, generate_clinical
from grading import metrics
from grading.bundles import bundle_import
from grading.models import RoutingDesign, RoutingDraw
from grading.reports.inputs import ReportInputs
from grading.reports.ppi import response_figures
from grading.reports.registry import report_get
from grading.routing.services import routing_extend
from grading.sources import source_parse
from tests.roles import grant

MODELS = ("gpt-4o", "llama-3-70b", "qwen2-72b")
JUDGE = f"judge:{DEFAULT_JUDGES[2].name}"  # claude-judge: three Monte Carlo samples


@pytest.fixture
def study(db, tmp_path):
    generate_clinical(tmp_path / "route", slug="route", n_cases=20, n_criteria=6, models=MODELS, human_answer_cases=0,
                      cohorts=DEFAULT_COHORTS[:1], overlap=1, checker_share=0.0, judges=DEFAULT_JUDGES[:4], seed=8)
    bundle_import(path=tmp_path / "route")
    return Project.objects.get(slug="route")


@pytest.fixture
def manager(study, django_user_model):
    user = django_user_model.objects.create_user("route-manager", password="pw")
    grant(user, study, "manager")
    return user


def _cohort(project) -> Cohort:
    return Cohort.objects.get(project=project, name="group-1")


def test_a_design_draws_each_response_with_its_probability_and_assigns_the_drawn(study, manager):
    cohort = _cohort(study)
    Assignment.objects.filter(cohort=cohort).delete()
    done = routing_extend(project=study, cohort=cohort, budget=15, by=manager, seed=3)
    draws = list(RoutingDraw.objects.filter(design=done.design))
    assert done.population == len(draws) == 60
    assert sum(d.probability for d in draws) == pytest.approx(15)
    chosen = {d.response_id for d in draws if d.chosen_round == 1}
    assert chosen == {d.response_id for d in draws if d.draw < d.probability} and done.chosen_now == len(chosen)
    # the judges' split steers it: the most uncertain responses are the likeliest to be drawn
    by_uncertainty = sorted(draws, key=lambda d: d.uncertainty)
    assert by_uncertainty[-1].probability > by_uncertainty[0].probability
    assert len({d.uncertainty for d in draws}) > 1
    # every drawn response goes to `overlap` annotators of the cohort, and nothing else does
    assigned = set(Assignment.objects.filter(cohort=cohort).values_list("response_id", flat=True))
    assert assigned == chosen and done.assignments == len(chosen) * study.overlap
    event = AuditEvent.objects.get(project=study, action="route")
    assert event.after["budget"] == 15 and event.after["chosen_now"] == len(chosen)


def test_raising_the_budget_keeps_every_drawn_response_and_only_grows(study, manager):
    cohort = _cohort(study)
    first = routing_extend(project=study, cohort=cohort, budget=10, by=manager, seed=1)
    before = {d.response_id: (d.probability, d.draw, d.uncertainty, d.chosen_round)
              for d in RoutingDraw.objects.filter(design=first.design)}
    second = routing_extend(project=study, cohort=cohort, budget=30, by=manager)
    after = {d.response_id: d for d in RoutingDraw.objects.filter(design=second.design)}
    for response_id, (probability, draw, uncertainty, chosen_round) in before.items():
        now = after[response_id]
        assert (now.draw, now.uncertainty) == (draw, uncertainty)  # fixed once drawn: the probabilities stay known
        assert now.probability >= probability - 1e-12
        if chosen_round is not None:
            assert now.chosen_round == chosen_round
    assert second.chosen == sum(d.draw < d.probability for d in after.values()) >= first.chosen
    design = RoutingDesign.objects.get(cohort=cohort)
    assert (design.budget, design.rounds) == (30, 2)
    with pytest.raises(ValidationError, match="can only grow"):
        routing_extend(project=study, cohort=cohort, budget=20, by=manager)
    with pytest.raises(ValidationError, match="more than the project's 60"):
        routing_extend(project=study, cohort=cohort, budget=61, by=manager)
    design.refresh_from_db()
    assert (design.budget, design.rounds) == (30, 2)  # refused: nothing changed


def test_only_managers_route_and_a_project_without_a_judge_is_told_why(study, manager, django_user_model):
    viewer = django_user_model.objects.create_user("route-viewer")
    grant(viewer, study, "viewer")
    with pytest.raises(PermissionDenied):
        routing_extend(project=study, cohort=_cohort(study), budget=5, by=viewer)
    with pytest.raises(ValidationError, match="no judge 'nobody'"):
        routing_extend(project=study, cohort=_cohort(study), budget=5, by=manager, judges=["nobody"])
    study.judges.all().delete()
    with pytest.raises(ValidationError, match="has no judge"):
        routing_extend(project=study, cohort=_cohort(study), budget=5, by=manager)
    assert not RoutingDesign.objects.exists()


def routing(*args: str) -> dict:
    out = StringIO()
    call_command("routing", "--project", "route", "--cohort", "cohort:group-1", "--judge", JUDGE, "--json", *args,
                 stdout=out)
    return json.loads(out.getvalue())


def test_the_routed_estimate_weights_the_drawn_labels_by_their_probabilities(study, manager):
    routing_extend(project=study, cohort=_cohort(study), budget=24, by=manager, seed=2)
    found = routing()
    design = found["design"]
    assert found["mode"] == "routed" and design["budget"] == 24 and design["pending"] == 0
    # the same figure by hand: the humans' rubric accuracy on the drawn responses, the judge's on all
    inputs = ReportInputs(study)
    humans = response_figures(inputs=inputs, source=source_parse(text="cohort:group-1", project=study),
                              metric="rubric_accuracy", k=None)
    judged = response_figures(inputs=inputs, source=source_parse(text=JUDGE, project=study), metric="rubric_accuracy",
                              k=None)
    draws = {d.response_id: d for d in RoutingDraw.objects.filter(design__cohort__name="group-1")}
    ids = sorted(judged.index)
    values = np.array([humans.loc[i, "value"] if draws[i].chosen_round else np.nan for i in ids])
    expected = metrics.active_mean(values, judged.loc[ids, "value"].to_numpy(), [draws[i].probability for i in ids])
    assert found["overall"]["estimate"] == pytest.approx(expected.estimate)
    assert found["overall"]["ci"] == pytest.approx(list(expected.ci))
    assert found["overall"]["n_labelled"] == design["chosen"] == int(np.sum(~np.isnan(values)))
    plan = found["plan"]
    assert plan["target_width"] == pytest.approx(found["overall"]["width"])
    assert plan["uniform_budget"] >= 2 and plan["routed_budget"] >= 2
    assert plan["saved"] == plan["uniform_budget"] - plan["routed_budget"]
    assert len(plan["curve"]) >= 5 and plan["curve"][-1][0] == 60
    # a wider target needs fewer labels, a target no budget reaches says so
    wider = routing("--target-width", str(2 * found["overall"]["width"]))["plan"]
    assert wider["routed_budget"] < plan["routed_budget"] or wider["routed_budget"] <= 2
    assert routing("--target-width", "0.001")["plan"]["routed_budget"] is None


def test_without_a_design_the_labels_count_as_a_uniform_sample(study):
    found = routing()
    assert found["mode"] == "uniform" and found["design"] is None
    assert found["n_labelled"] == found["n_responses"] == 60
    coverage = report_get("coverage").answer(project=study, source="cohort:group-1")
    for model, entry in found["models"].items():  # every response labelled: the humans' own figure
        assert entry["estimate"] == pytest.approx(coverage["by_model"][model]["rubric_accuracy"])


def test_route_labels_command_and_its_refusal(study):
    out = StringIO()
    call_command("route_labels", "--project", "route", "--cohort", "group-1", "--budget", "12", "--json", stdout=out)
    found = json.loads(out.getvalue())
    assert found["budget"] == 12 and found["round"] == 1 and found["responses"] == 60
    with pytest.raises(CommandError, match="can only grow"):
        call_command("route_labels", "--project", "route", "--cohort", "group-1", "--budget", "5")
    with pytest.raises(CommandError, match="no cohort 'nope'"):
        call_command("route_labels", "--project", "route", "--cohort", "nope", "--budget", "5")


def test_the_page_shows_the_plan_and_the_managers_form_draws(study, manager, client, django_user_model):
    client.force_login(manager)
    url = reverse("report-routing", kwargs={"slug": "route"}) + f"?cohort=cohort:group-1&judge={JUDGE}"
    page = client.get(url).content.decode()
    assert 'id="routing-plan"' in page and 'id="routing-extend"' in page and "Routed by the judges" in page
    answer = client.post(reverse("routing-extend", kwargs={"slug": "route"}),
                         {"cohort": _cohort(study).pk, "budget": 18, "seed": 4, "next": url}, follow=True)
    assert answer.redirect_chain[-1][0] == url
    text = answer.content.decode()
    assert "more responses drawn" in text and 'id="routing-design"' in text
    refused = client.post(reverse("routing-extend", kwargs={"slug": "route"}),
                          {"cohort": _cohort(study).pk, "budget": 3}, follow=True).content.decode()
    assert "Nothing drawn: " in refused and "can only grow" in refused
    viewer = django_user_model.objects.create_user("route-reader")
    grant(viewer, study, "viewer")
    client.force_login(viewer)
    assert 'id="routing-extend"' not in client.get(url).content.decode()
    assert client.post(reverse("routing-extend", kwargs={"slug": "route"}), {"cohort": _cohort(study).pk,
                                                                             "budget": 40}).status_code == 403
    assert RoutingDesign.objects.get().budget == 18


def test_the_api_routes_and_refuses_by_name(study, manager, client):
    client.force_login(manager)
    url = reverse("api-routing", kwargs={"slug": "route"})
    answer = client.post(url, {"cohort": "group-1", "budget": 9, "seed": 7}, content_type="application/json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["budget"] == 9 and body["seed"] == 7 and body["responses"] == 60 and body["round"] == 1
    assert client.post(url, {"cohort": "nobody", "budget": 9}, content_type="application/json").status_code == 404
    refused = client.post(url, {"cohort": "group-1", "budget": 2}, content_type="application/json")
    assert refused.status_code == 400 and "can only grow" in json.dumps(refused.json())
    report = client.get(reverse("api-report-routing", kwargs={"slug": "route"}),
                        {"cohort": "cohort:group-1", "judge": JUDGE})
    assert report.status_code in (200, 202)
