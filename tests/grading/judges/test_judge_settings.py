"""Judge settings a practitioner expects (issue 11, point 7): output-token cap, reasoning effort
where the server supports it, request timeout, and the case's reference answer in a template.
Against the loopback Chat Completions server, which records every request body."""
import pytest

from annotation.models import Case
from grading.judges.services import prompt_template_save
from grading.judges.settings import SettingsError, judge_settings_parse
from tests.grading.judges.chat_server import Reply, default_script
from tests.roles import grant

ITEMS = 11


def test_settings_read_reasoning_effort_and_refuse_a_wrong_one():
    assert judge_settings_parse({"reasoning_effort": "low", "max_tokens": 200}).reasoning_effort == "low"
    assert judge_settings_parse({}).reasoning_effort == ""
    with pytest.raises(SettingsError, match="reasoning_effort: 'extreme' is not one of minimal, low, medium, high"):
        judge_settings_parse({"reasoning_effort": "extreme"})


def test_output_tokens_and_reasoning_effort_are_sent(make_judge, run_judge, chat_server):
    judge = make_judge(settings={"max_tokens": 300, "reasoning_effort": "high", "timeout_seconds": 5})
    run, _ = run_judge(judge)
    assert run.status == "finished"
    assert {(r["max_tokens"], r["reasoning_effort"]) for r in chat_server.requests} == {(300, "high")}


def test_a_server_without_reasoning_effort_is_asked_again_without_it(make_judge, run_judge, chat_server):
    def script(body, index):
        if "reasoning_effort" in body:
            return Reply(status=400, error="Unrecognized request argument supplied: reasoning_effort")
        return default_script(body, index)

    chat_server.script = script
    run, _ = run_judge(make_judge(settings={"reasoning_effort": "low"}, concurrency=1))
    assert (run.status, run.done_calls, run.failed_calls, run.retries) == ("finished", ITEMS, 0, 0)
    assert sum("reasoning_effort" in r for r in chat_server.requests) == 1  # asked once, then never again
    assert len(chat_server.requests) == ITEMS + 1


def test_a_template_may_show_the_reference_answer(make_judge, run_judge, chat_server):
    template = prompt_template_save(
        name="with-reference", system="Grade.",
        binary_user="Answer: $response\nReference: $reference_answer\nItem: $criterion\nReply in JSON.",
        option_user="Answer: $response\nReference: $reference_answer\nItem: $criterion\nOptions:\n$options")
    run, _ = run_judge(make_judge(prompt_template=template))
    reference = Case.objects.get(external_id="c2").reference_answer
    prompts = chat_server.user_prompts()
    assert run.status == "finished" and reference
    assert any(f"Reference: {reference}\n" in p for p in prompts)
    assert all("$reference_answer" not in p for p in prompts)  # a case without one: empty, never the placeholder


def test_the_judges_page_saves_the_new_settings(client, mini_project, django_user_model):
    client.force_login(grant(django_user_model.objects.create_user("boss", password="pw"), mini_project, "manager"))
    data = {"action": "judge", "judge-name": "reasoner", "judge-backend": "openai", "judge-model": "m",
            "judge-base_url": "http://127.0.0.1:9/v1", "judge-condition": "anonymized", "judge-temperature": "0",
            "judge-samples": "1", "judge-concurrency": "2", "judge-max_retries": "0", "judge-price_in_per_mtok": "0",
            "judge-price_out_per_mtok": "0", "judge-timeout_seconds": "20", "judge-max_tokens": "512",
            "judge-reasoning_effort": "medium", "judge-min_evidence": "0", "judge-shuffle_seed": "0",
            "judge-few_shot_k": "0", "judge-few_shot_seed": "0", "judge-json_mode": "on"}
    page = client.post(f"/projects/{mini_project.slug}/judges/", data)
    assert page.status_code == 302, page.content.decode()[:2000]
    settings = mini_project.judges.get(name="reasoner").settings
    assert (settings["max_tokens"], settings["reasoning_effort"], settings["timeout_seconds"]) == (512, "medium", 20.0)
