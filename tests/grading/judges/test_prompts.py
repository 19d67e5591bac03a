"""What judges are shown: attributed vs anonymized prompts, few-shot examples, option shuffling,
custom template versions. Prompts are read off a real loopback Chat Completions server."""
import json
import re
from collections import Counter

from grading.judges import prompts
from grading.judges.plan import fewshot_examples
from grading.judges.services import prompt_template_save
from grading.models import Judgment
from tests.grading.judges.chat_server import Reply, answer

SOURCES = ("model-a", "model-b", "physician")


def user_text(body):
    return body["messages"][-1]["content"]


def test_attributed_prompts_name_the_source_model_and_anonymized_ones_never_do(make_judge, run_judge, chat_server):
    run_judge(make_judge(name="att", model="judge-att", condition="attributed"))
    run_judge(make_judge(name="anon", model="judge-anon", condition="anonymized"))
    att = [b for b in chat_server.requests if b["model"] == "judge-att"]
    anon = [b for b in chat_server.requests if b["model"] == "judge-anon"]
    assert len(att) == len(anon) == 11
    def authors(bodies):
        return Counter(re.search(r'<answer author="([^"]*)">', user_text(b)).group(1) for b in bodies)
    assert authors(att) == {"model-a": 5, "model-b": 3, "physician": 3}
    # stable aliases by first appearance of each source model in the project
    assert authors(anon) == {"Expert 1": 5, "Expert 2": 3, "Expert 3": 3}
    for body in anon:
        messages = json.dumps(body["messages"])
        assert "model-a" not in messages and "model-b" not in messages and 'author=\\"physician' not in messages
    # the model name is the only difference between the two conditions
    def by_answer(bodies):
        return sorted(re.sub(r'<answer author="[^"]*">', "", user_text(b)) for b in bodies)
    assert by_answer(att) == by_answer(anon)


def test_aliases_are_stable_when_models_are_added():
    assert prompts.model_aliases(["a", "b"]) == {"a": "Expert 1", "b": "Expert 2"}
    assert prompts.model_aliases(["a", "b", "c"])["b"] == "Expert 2"


def test_few_shot_sampling_is_balanced_seeded_and_excludes_the_judged_item():
    pool = [(r, "met", None, None) for r in range(1, 9)] + [(9, "not_met", None, None), (10, "not_met", None, None),
                                                            (11, "cannot_assess", None, None)]
    texts = {r: f"answer {r}" for r in range(1, 12)}
    picked = fewshot_examples(pool=pool, texts=texts, exclude_response=9, k=6, seed="s")
    assert Counter(e.verdict for e in picked) == {"met": 4, "not_met": 1, "cannot_assess": 1}
    assert "answer 9" not in [e.response_text for e in picked]
    balanced = fewshot_examples(pool=pool, texts=texts, exclude_response=1, k=4, seed="s")
    assert Counter(e.verdict for e in balanced) == {"met": 2, "not_met": 1, "cannot_assess": 1} or Counter(
        e.verdict for e in balanced) == {"met": 1, "not_met": 2, "cannot_assess": 1}
    two = fewshot_examples(pool=pool, texts=texts, exclude_response=1, k=2, seed="x")
    assert len({e.verdict for e in two}) == 2  # two examples, two different verdicts
    assert fewshot_examples(pool=pool, texts=texts, exclude_response=1, k=4, seed="s") == balanced  # seeded
    draws = {tuple(e.response_text for e in fewshot_examples(pool=pool, texts=texts, exclude_response=1, k=3, seed=str(s)))
             for s in range(10)}
    assert len(draws) > 1  # the seed matters
    for seed in range(20):
        for judged in range(1, 12):
            examples = fewshot_examples(pool=pool, texts=texts, exclude_response=judged, k=10, seed=str(seed))
            assert f"answer {judged}" not in [e.response_text for e in examples]


def test_few_shot_examples_in_prompts_come_from_the_cohort_and_never_show_the_judged_answer(make_judge, run_judge, chat_server):
    run, _ = run_judge(make_judge(settings={"few_shot": {"cohort": "group-1", "k": 2, "seed": 3, "split": {"cases": ["c1"]}}}),
                       scope={"criteria": ["c1-ecg"]})
    assert run.done_calls == 3
    texts = {"r1": "Call emergency services now. An ECG is needed.", "r2": "Rest and take antibiotics.",
             "r4": "Call 911; ECG on arrival."}
    seen = {}
    for body in chat_server.requests:
        user = user_text(body)
        judged = re.search(r'<answer author="[^"]*">\n(.*?)\n</answer>', user, re.DOTALL).group(1)
        block = user.split("<examples>", 1)[1].split("</examples>", 1)[0]
        examples = re.findall(r"<answer>\n(.*?)\n</answer>\nGrade: \{(.*?)\}", block, re.DOTALL)
        assert judged not in [t for t, _ in examples]
        assert {t for t, _ in examples} <= set(texts.values())
        seen[judged] = sorted(g for _, g in examples)
    # group-1 labels c1-ecg: r1 met, r2 not met, r4 met -> judging r1 or r4 shows one of each
    assert seen[texts["r1"]] == ['"criteria_met": false', '"criteria_met": true']
    assert seen[texts["r4"]] == ['"criteria_met": false', '"criteria_met": true']
    assert seen[texts["r2"]] == ['"criteria_met": true', '"criteria_met": true']


def test_option_shuffling_moves_options_but_the_score_follows_the_option(make_judge, run_judge, chat_server):
    def script(body, index):
        listed = user_text(body).split("<options>\n", 1)[1].split("\n</options>", 1)[0].split("\n")
        choice = "good" if "- good" in listed else "right"
        return answer({"explanation": "picked by meaning", "option": choice})

    chat_server.script = script
    orders, scores = set(), set()
    for seed in range(6):
        judge = make_judge(name=f"shuffled-{seed}", settings={"shuffle_options": True, "shuffle_seed": seed})
        run, _ = run_judge(judge, scope={"responses": ["r3"]})
        for body in chat_server.requests[-2:]:
            listed = user_text(body).split("<options>\n", 1)[1].split("\n</options>", 1)[0]
            if "- good" in listed:
                orders.add(listed)
        scores |= {(j.criterion.external_id, j.option_label, j.value) for j in Judgment.objects.filter(run=run).select_related("criterion")}
    assert len(orders) > 1  # positions changed ...
    assert scores == {("tone", "good", 1.0), ("length", "right", 1.0)}  # ... scores did not

    # Another model, so the request cache cannot answer it: a seed whose shuffle happens to keep
    # the original order (1 in 24 per seed; the seeds mix in database ids) made the same prompt.
    plain = make_judge(name="unshuffled", model="judge-model-plain")
    requests_before = len(chat_server.requests)
    run_judge(plain, scope={"responses": ["r3"], "criteria": ["tone"]})
    assert len(chat_server.requests) == requests_before + 1
    listed = user_text(chat_server.requests[-1]).split("<options>\n", 1)[1].split("\n</options>", 1)[0]
    assert listed == "- poor\n- ok\n- good\n- n/a"


def test_a_custom_template_version_is_used_and_edits_make_new_versions(make_judge, run_judge, chat_server, db):
    v1 = prompt_template_save(name="terse", system="", binary_user="Item: $criterion\nAnswer by $author: $response\nJSON!",
                              option_user="Pick: $options")
    same = prompt_template_save(name="terse", system="", binary_user=v1.binary_user, option_user=v1.option_user)
    v2 = prompt_template_save(name="terse", system="Be brief.", binary_user=v1.binary_user, option_user=v1.option_user)
    assert (v1.version, same.pk, v2.version) == (1, v1.pk, 2)
    chat_server.script = lambda body, index: Reply(content='{"explanation": "x", "criteria_met": true}')
    run, _ = run_judge(make_judge(prompt_template=v1), scope={"responses": ["r1"], "criteria": ["c1-ecg"]})
    body = chat_server.requests[-1]
    assert body["messages"] == [{"role": "user", "content": "Item: Recommends an ECG\nAnswer by Expert 1: "
                                 "Call emergency services now. An ECG is needed.\nJSON!"}]
    assert run.done_calls == 1


def test_few_shot_pool_is_the_cohort_rule_with_ordinal_values_kept(mini_project):
    """The pool holds the cohort's decisions (checker first, majority, ties out), including an
    ordinal decision given as a value, which used to be dropped."""
    from annotation.models import Cohort, Criterion, Label, Response
    from annotation.services import label_save
    from grading.judges.plan import fewshot_pool
    from grading.judges.prompts import Example, examples_block

    tone, r3 = Criterion.objects.get(external_id="tone"), Response.objects.get(external_id="r3")
    cohort = Cohort.objects.get(project=mini_project, name="group-1")
    for label in Label.objects.filter(response=r3, criterion=tone, cohort=cohort).select_related("annotator"):
        label_save(response=r3, criterion=tone, cohort=cohort, annotator=label.annotator, changed_by=None, value=0.75, replace=True)
    pool, texts = fewshot_pool(project=mini_project, cohort_name="group-1")
    assert (r3.pk, None, None, 0.75) in pool[tone.pk] and texts[r3.pk].startswith("Give fluids")
    abx = Criterion.objects.get(external_id="c1-abx")
    r1 = Response.objects.get(external_id="r1")
    assert (r1.pk, "not_met", None, None) in pool[abx.pk]  # the checker's decision, not the annotators'
    block = examples_block(examples=[Example(response_text="x", value=0.75)], kind="ordinal")
    assert '"value": 0.75' in block


def test_few_shot_examples_come_from_the_split_only_and_reports_leave_it_out(make_judge, run_judge, chat_server):
    """Issue 14: a judge's examples are drawn from its few-shot split, and every report of the judge
    leaves the split's cases out and says so (an example's own label never counts as agreement)."""
    import io
    import json

    from django.core.management import call_command

    from grading.judges.fewshot import fewshot_split_cases

    judge = make_judge(settings={"few_shot": {"cohort": "group-1", "k": 2, "seed": 3, "split": {"cases": ["c1"]}}})
    run_judge(judge, scope={"criteria": ["c1-ecg"]})
    assert all("<examples>" in user_text(body) for body in chat_server.requests)  # c1's own labelled answers
    assert len(fewshot_split_cases(judge)) == 1
    default = make_judge(name="split-by-share", settings={"few_shot": {"cohort": "group-1", "k": 2, "seed": -7}})
    assert len(fewshot_split_cases(default)) == 1  # a seeded fifth of two cases: one (negative seeds work)

    def agreement(b):
        out = io.StringIO()
        call_command("agreement", "--project", "mini", "--a", "cohort:group-1", "--b", b, "--json", stdout=out)
        return json.loads(out.getvalue())

    mine = agreement("judge:llm")
    assert mine["left_out"]["few_shot_cases"] == {"judge:llm": 1}
    assert mine["n_decisions"] == 0  # every judged item is of c1, the split: none counts
    judge.settings = {"few_shot": {"cohort": "group-1", "k": 2, "seed": 3, "split": {"cases": ["c2"]}}}
    judge.save()
    assert agreement("judge:llm")["n_decisions"] == 9  # c1 is outside the split now: its 3 responses × 3 criteria count
