"""A study built directly in the database for the annotation tests: two cohorts, annotators and
checkers, a researcher, case-specific binary criteria plus one ordinal criterion, responses from
two models whose names are distinctive so that a leak is easy to detect, and assignments."""
from types import SimpleNamespace

import pytest

PASSWORD = "pw-12345"
MODELS = ("secret-model-alpha", "secret-model-beta")


def build_study(*, slug="study", blind=True, n_cases=2, n_criteria=3, with_ordinal=True, show_reference=False,
                overlap=1, annotators=(("a1", "a2"), ("b1",)), min_evidence=0):
    from django.contrib.auth import get_user_model

    from annotation.assignments import assignments_create
    from annotation.models import Case, Cohort, CohortMembership, Project, Response
    from annotation.rubrics import rubrics_freeze

    User = get_user_model()
    project = Project.objects.create(slug=slug, name=f"Study {slug}", blind=blind, overlap=overlap,
                                     show_reference_answer=show_reference)
    cases, scopes = [], []
    for i in range(n_cases):
        case = Case.objects.create(
            project=project, external_id=f"{slug}-case-{i}", position=i,
            prompt=f"Prompt {i}: a patient with **chest pain** for two hours.",
            reference_answer="REFERENCE-ANSWER-TEXT: call emergency services.",
        )
        specs = [{"criterion_id": f"{slug}-c{i}-{j}", "text": f"Criterion {j} of case {i}"} for j in range(n_criteria)]
        if min_evidence:  # the first criterion of each case requires quotes when met
            specs[0]["min_evidence"] = min_evidence
        if with_ordinal and i == 0:
            specs.append({"criterion_id": f"{slug}-c{i}-tone", "text": "Tone fits the patient", "kind": "ordinal",
                          "options": [{"label": "poor", "value": 0}, {"label": "ok", "value": 0.5},
                                      {"label": "good", "value": 1}]})
        cases.append(case)
        scopes.append((case, specs))
    rubrics_freeze(project=project, scopes=scopes)
    responses = []
    for i, case in enumerate(cases):
        for m, model in enumerate(MODELS):
            responses.append(Response.objects.create(
                project=project, case=case, external_id=f"{slug}-resp-{i}-{m}", position=len(responses), model=model,
                text=(f"Call emergency services now. An ECG is needed for case {i}.\n\n"
                      "Rest **afterwards**. <script>alert('x')</script><img src=x onerror=alert(1)>"),
            ))
    users = {}

    def user(name, **extra):
        if name not in users:
            users[name] = User.objects.filter(username=name).first() or User.objects.create_user(
                username=name, password=PASSWORD, **extra)
        return users[name]

    cohorts = []
    for c, names in enumerate(annotators):
        cohort = Cohort.objects.create(project=project, name=f"group-{c + 1}", position=c)
        cohorts.append(cohort)
        for name in names:
            CohortMembership.objects.create(project=project, cohort=cohort, user=user(name), role="annotator")
        CohortMembership.objects.create(project=project, cohort=cohort, user=user(f"chk{c + 1}"), role="checker")
    from tests.roles import grant

    grant(user("res", is_staff=True), project)
    user("outsider")
    for cohort in cohorts:
        assignments_create(cohort=cohort)
    return SimpleNamespace(project=project, cases=cases, responses=responses, cohorts=cohorts, users=users)


def first_assignment(username: str):
    from annotation.models import Assignment

    return Assignment.objects.filter(annotator__username=username).select_related("response").order_by("position").first()


@pytest.fixture
def study(db):
    return build_study()


@pytest.fixture
def login_client(client):
    def as_user(username):
        from django.contrib.auth import get_user_model

        client.force_login(get_user_model().objects.get(username=username))
        return client

    return as_user
