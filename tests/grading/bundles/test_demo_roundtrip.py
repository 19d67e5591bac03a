"""Export → import into an empty database → export on every demo project (issue 24 point 5): the
same files byte for byte (the manifest's time aside) and every report command's JSON the same,
with a clinical-demo that has cases excluded by quality control and a judge with a seeded
few-shot split drawn over the cases (which an export that left excluded cases out drew again
over fewer cases), adjudications, roles and a checker."""
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command

from tests.grading.reports.test_report_snapshots import (
    PROJECTS,
    _command,
    _command_cases,
    _differences,
    _plain,
    _small_clinical,
    _trimmed,
    _trimmed_charm100,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    """The small demo projects, with quality control, a few-shot judge, an adjudication and roles
    on clinical-demo; rolled back after the module."""
    from django.db import transaction

    from annotation.models import Case, CaseQuality, Criterion, Project, Response
    from grading.adjudication.services import adjudication_record
    from grading.management.commands import load_demo
    from grading.models import Judge
    from tests.roles import grant

    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch, transaction.atomic():
        cache.clear()
        patch.setattr(load_demo, "generate_clinical", _small_clinical)
        patch.setattr(load_demo, "charm100_import", _trimmed_charm100)
        patch.setattr(load_demo, "convert_devai", _trimmed(load_demo.convert_devai))
        call_command("load_demo", "--json", stdout=io.StringIO())
        project = Project.objects.get(slug="clinical-demo")
        first, second = Case.objects.filter(project=project).order_by("position")[:2]
        CaseQuality.objects.create(project=project, case=first, flagged=True, excluded=True, screen_accuracy_pct=91.5,
                                   screen_threshold_pct=80.0, screen_source="cohort:group-1", screen_models=["gpt-4o"])
        CaseQuality.objects.create(project=project, case=second, audit_sampled=True, audit_outcome="pass",
                                   audit_note="=fine", audit_by=get_user_model().objects.create_user("senior"))
        judge = Judge.objects.filter(project=project).order_by("name").first()
        cohort = project.cohorts.order_by("position").first().name
        judge.settings = {**judge.settings, "few_shot": {"cohort": cohort, "k": 2, "seed": 7, "split": {"share": 0.3}}}
        judge.save(update_fields=["settings"])
        grant(get_user_model().objects.create_user("reader"), project, "viewer")
        response = Response.objects.filter(project=project).order_by("position").last()
        criterion = Criterion.objects.filter(case=response.case).order_by("position").first()
        adjudication_record(response=response, criterion=criterion, user=get_user_model().objects.create_user("adj"),
                            verdict="met", note="checked\r=cmd")
        yield
        transaction.set_rollback(True)


def _answers(slug: str) -> dict:
    answers = {}
    for command, options in _command_cases(slug):
        cache.clear()
        answers[f"{command} {json.dumps(options, sort_keys=True)}"] = _plain(_command(command, slug, options))
    return answers


# every demo project: the three pinned by the snapshots, the RULERS traits study and the one not started
@pytest.mark.parametrize("slug", [*PROJECTS, "clinical-traits", "clinical-not-started"])
def test_export_import_export_is_exact(demo, slug, tmp_path):
    from annotation.models import CaseQuality, Project
    from grading.bundles import bundle_import, gold_export

    before = _answers(slug)
    first = tmp_path / "first"
    gold_export(project=Project.objects.get(slug=slug), out_dir=first)
    excluded = CaseQuality.objects.filter(project__slug=slug, excluded=True).count()

    Project.objects.filter(slug=slug).delete()  # nothing of the project is left
    bundle_import(path=first)

    assert CaseQuality.objects.filter(project__slug=slug, excluded=True).count() == excluded
    after = _answers(slug)
    differences = _differences(after, before)
    assert not differences, "; ".join(differences[:8])
    second = tmp_path / "second"
    gold_export(project=Project.objects.get(slug=slug), out_dir=second)
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    for name in names:
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if name == "manifest.json":
            a, b = json.loads(a), json.loads(b)
            a.pop("exported_at"), b.pop("exported_at")
        assert a == b, name


def test_the_clinical_bundle_carries_what_its_figures_rest_on(demo, tmp_path):
    from annotation.models import Project
    from grading.bundles import gold_export

    out = tmp_path / "out"
    gold_export(project=Project.objects.get(slug="clinical-demo"), out_dir=out)
    project = json.loads((out / "project.json").read_text())
    assert {"user": "reader", "role": "viewer"} in project["roles"]
    members = {m["user"]: m["role"] for cohort in project["cohorts"] for m in cohort["members"]}
    assert "checker" in members.values() and "annotator" in members.values()
    assert not any("password" in json.dumps(entry) for entry in project["roles"])
    quality = [json.loads(line) for line in (out / "quality.jsonl").read_text().splitlines()]
    assert [q["excluded"] for q in quality] == [True, False] and quality[1]["audit_by"] == "senior"
    cases = [json.loads(line)["case_id"] for line in (out / "cases.jsonl").read_text().splitlines()]
    gold_cases = {json.loads(line)["response_id"] for line in (out / "gold.jsonl").read_text().splitlines()}
    assert quality[0]["case_id"] in cases  # the excluded case is in the bundle ...
    responses = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert not {r["response_id"] for r in responses if r["case_id"] == quality[0]["case_id"]} & gold_cases  # ... not in gold
