"""The judge backend seam (issue 23, point 2): a backend declared in this module only, with its
own typed setting and form field, goes through the judges page, the run machinery and a report
without any other file knowing its name; and a wrong declaration fails at registration."""
from dataclasses import asdict, dataclass

import pytest
from django import forms
from django.contrib.auth import get_user_model
from django.urls import reverse

from grading.judges.backends import JudgeBackend, backend_get, backend_names, register, unregister
from grading.judges.parsing import Outcome
from grading.judges.settings import JudgeSettings, SettingsError, judge_settings_parse
from grading.models import Judge, JudgeRun, Judgment
from tests.roles import grant

FAKE = "always"


@dataclass(frozen=True)
class AlwaysSettings(JudgeSettings):
    answer: str = "met"


class AlwaysBackend(JudgeBackend):
    """Answers every binary criterion with its one configured verdict; nothing else."""

    name = FAKE
    label = "always the same verdict (test)"
    executes_calls = page_form = configurable = True

    def settings_parse(self, data):
        data = dict(data or {})
        answer = data.pop("answer", "met")
        if answer not in ("met", "not_met"):
            raise SettingsError("answer", f"{answer!r} is not met or not_met")
        return AlwaysSettings(**asdict(judge_settings_parse(data)), answer=answer)

    def settings_fields(self) -> dict:
        return {"always_answer": forms.ChoiceField(choices=[("met", "met"), ("not_met", "not met")], initial="met",
                                                   required=False, help_text="The verdict this judge always gives.")}

    def settings_initial(self, settings) -> dict:
        return {"always_answer": settings.answer}

    def settings_write(self, data: dict, settings: dict) -> None:
        settings["answer"] = data.get("always_answer") or "met"

    def execute(self, *, context, calls) -> None:
        for call in calls:
            if context.stopping:
                break
            if call.item.kind == "binary":
                outcome = Outcome(valid=True, verdict=context.settings.answer, explanation="always")
            else:
                outcome = Outcome(valid=False, problem="this judge answers binary criteria only")
            context.record(call, outcome, raw=context.settings.answer)
            context.flush_maybe()


@pytest.fixture
def staff(client, mini_project):
    user = get_user_model().objects.create_user(username="researcher", password="pw", is_staff=True)
    grant(user, mini_project)
    client.force_login(user)
    return client


@pytest.fixture
def always():
    register(AlwaysBackend)
    yield backend_get(FAKE)
    unregister(FAKE)


def test_a_backend_declared_in_a_test_module_is_configured_run_and_reported(always, staff, mini_project):
    assert FAKE in backend_names(executes_calls=True)
    url = reverse("judges-page", args=["mini"])
    html = staff.get(url).content.decode()
    assert f'<option value="{FAKE}">' in html and 'name="judge-always_answer"' in html  # its choice and its field

    response = staff.post(url, {"action": "judge", "judge-name": "yes-man", "judge-backend": FAKE,
                                "judge-condition": "anonymized", "judge-temperature": "0", "judge-samples": "1",
                                "judge-concurrency": "1", "judge-max_retries": "0", "judge-price_in_per_mtok": "0",
                                "judge-price_out_per_mtok": "0", "judge-timeout_seconds": "60", "judge-shuffle_seed": "0",
                                "judge-min_evidence": "0", "judge-few_shot_k": "0", "judge-few_shot_seed": "0",
                                "judge-always_answer": "not_met"})
    assert response.status_code == 302
    judge = Judge.objects.get(project=mini_project, name="yes-man")
    assert judge.backend == FAKE and judge.settings["answer"] == "not_met" and judge.kind is always
    assert judge.typed_settings.answer == "not_met"
    assert 'class="edit-judge"' in staff.get(url).content.decode()  # the page edits it like a built-in one

    from grading.judges.runner import judge_run_execute
    from grading.judges.services import judge_run_create

    run = judge_run_create(judge=judge)
    summary = judge_run_execute(run=run)
    run.refresh_from_db()
    judgments = Judgment.objects.filter(judge=judge)
    binary = judgments.filter(criterion__kind="binary")
    assert run.status == JudgeRun.FINISHED and summary.judgments == run.total_calls == judgments.count() > 0
    assert binary.exists() and set(binary.values_list("verdict", flat=True)) == {"not_met"}
    assert set(binary.values_list("valid", flat=True)) == {True}
    assert set(judgments.exclude(criterion__kind="binary").values_list("valid", flat=True)) <= {False}

    # A report takes it as a source like any judge (the agreement report's compute function).
    from grading.reports.agreement import agreement_compute
    from grading.reports.inputs import ReportInputs
    from grading.sources import source_parse

    a, b = (source_parse(text=text, project=mini_project) for text in ("cohort:group-1", "judge:yes-man"))
    result = agreement_compute(inputs=ReportInputs(mini_project), a=a, b=b)
    summary = result["summary"]
    assert result["b"] == "judge:yes-man" and summary["n_decisions"] > 0
    assert summary["positive_rate_b"] == 0.0  # it said not met to everything


def test_its_settings_are_checked_by_its_own_parser(always, mini_project):
    from django.core.exceptions import ValidationError

    from grading.judges.services import judge_save

    with pytest.raises(ValidationError, match="settings.answer"):
        judge_save(judge=Judge(project=mini_project, name="bad", backend=FAKE, settings={"answer": "maybe"}))
    with pytest.raises(ValidationError, match="unknown judge backend"):
        judge_save(judge=Judge(project=mini_project, name="nobody", backend="no-such-backend"))


def test_a_wrong_declaration_fails_at_registration():
    class Nameless(JudgeBackend):
        label = "no name"

    class Runless(JudgeBackend):
        name, label, executes_calls = "runless", "runs without execute", True

    class TooLong(JudgeBackend):
        name, label = "x" * (Judge._meta.get_field("backend").max_length + 1), "too long"

    class Twice(JudgeBackend):
        name, label = "openai", "a second openai"

    class VotingRun(AlwaysBackend):
        name, votes_over_members = "voting-run", True

    for wrong, message in ((Nameless, "name"), (Runless, "execute"), (TooLong, "name"), (Twice, "registered already"),
                           (VotingRun, "never run")):
        with pytest.raises((TypeError, ValueError), match=message):
            register(wrong)
    assert not {"runless", "voting-run"} & set(backend_names())


def test_the_builtin_backends_keep_their_stored_names():
    assert set(backend_names()) >= {"openai", "baseline", "replay", "panel", "calibrated"}
    assert backend_names(votes_over_members=True) == ["panel"]
    assert set(backend_names(derived=True)) == {"panel", "calibrated"}
    assert set(backend_names(calls_out=True)) == {"openai"}
    assert set(backend_names(page_form=True)) == {"openai", "baseline"}
    assert set(backend_names(configurable=True)) == {"openai", "baseline", "panel"}
