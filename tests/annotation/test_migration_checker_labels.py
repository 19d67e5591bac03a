"""The data steps of migrations annotation 0004-0006 (rubric on the case, project on label history,
one checker label per cohort): old-state rows are built with the historical models at 0003,
the migration runs forward (once for the module: ``migrated``), and the rows it rewrote are
checked one by one.

Grading's migrations depend on annotation 0002 at most, so only annotation is taken back.
It runs on both databases (on PostgreSQL the data step, 0005, commits before 0006 alters the tables).
"""
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = ("annotation", "0003_label_cohort_index")
MIGRATION = ("annotation", "0005_checker_labels_data")


def _leaf_nodes(executor, *, annotation=None):
    """Every app at its latest migration; annotation at ``annotation`` when given."""
    executor.loader.build_graph()
    return [annotation if annotation and app == "annotation" else (app, name) for app, name in executor.loader.graph.leaf_nodes()]


@pytest.fixture(scope="module")
def migrated(django_db_setup, django_db_blocker):
    """The old-state rows built with the historical models at 0003 and migrated forward, once for
    the module: its tests only read what the migration made of them. Annotation goes back to 0003
    and forward again in its own transactions (as a transactional test's would), so the rows are
    committed while the module's tests read them; afterwards every app is migrated forward again,
    also when the forward run failed, and the rows are flushed, so later tests see the normal
    schema and an empty database."""
    with django_db_blocker.unblock():
        executor = MigrationExecutor(connection)
        executor.migrate([BEFORE])
        executor.loader.build_graph()
        try:
            assert MIGRATION not in executor.loader.applied_migrations
            # The models as they were at 0003 (and what it depends on: auth, contenttypes); other apps'
            # later migrations may depend on newer annotation states and are left out.
            old = _build_old_rows(executor.loader.project_state(BEFORE, at_end=True).apps)
            _migrate_forward()
            yield old
        finally:
            executor = MigrationExecutor(connection)
            if MIGRATION not in executor.loader.applied_migrations:
                # The forward run failed: the old rows that made it fail would fail it again.
                call_command("flush", interactive=False, verbosity=0)
            executor.migrate(_leaf_nodes(executor))
            call_command("flush", interactive=False, verbosity=0)


def _migrate_forward():
    executor = MigrationExecutor(connection)
    executor.migrate(_leaf_nodes(executor))
    executor.loader.build_graph()
    assert MIGRATION in executor.loader.applied_migrations


def _state(label) -> dict:
    return {"verdict": label.verdict, "option": label.option_label, "value": label.value, "rationale": label.rationale,
            "evidence": list(label.evidence or []), "role": label.role}


def _build_old_rows(apps):
    """Two projects. Project p1: case k1 has its own rubric (an old version and the current one),
    case k2 uses the project's rubric (likewise old and current); cohort g1 has an annotator
    and two checkers who each left a checker label on (r1, crit1), cohort g2 one checker. Project
    p2: one case on its own project's rubric, with one label."""
    User = apps.get_model("auth", "User")
    Project = apps.get_model("annotation", "Project")
    Case = apps.get_model("annotation", "Case")
    RubricVersion = apps.get_model("annotation", "RubricVersion")
    Criterion = apps.get_model("annotation", "Criterion")
    Response = apps.get_model("annotation", "Response")
    Cohort = apps.get_model("annotation", "Cohort")
    CohortMembership = apps.get_model("annotation", "CohortMembership")
    Assignment = apps.get_model("annotation", "Assignment")
    Label = apps.get_model("annotation", "Label")
    LabelHistory = apps.get_model("annotation", "LabelHistory")

    users = {name: User.objects.create(username=name) for name in ("ann1", "chk_a", "chk_b", "chk_c", "ann2")}
    p1 = Project.objects.create(slug="p1", name="P1")
    p2 = Project.objects.create(slug="p2", name="P2")
    k1 = Case.objects.create(project=p1, external_id="k1", position=0, prompt="one")
    k2 = Case.objects.create(project=p1, external_id="k2", position=1, prompt="two")
    k3 = Case.objects.create(project=p2, external_id="k3", position=0, prompt="three")

    def version(project, case, tag, *, current):
        return RubricVersion.objects.create(project=project, case=case, content_hash=tag.ljust(64, "0"), content=[tag],
                                            is_current=current)

    # The non-current versions are created last, so that "any version of the case" would pick them.
    rv_k1 = version(p1, k1, "k1-now", current=True)
    rv_p1 = version(p1, None, "p1-now", current=True)
    rv_p2 = version(p2, None, "p2-now", current=True)
    version(p1, k1, "k1-old", current=False)
    version(p1, None, "p1-old", current=False)

    crit1 = Criterion.objects.create(project=p1, case=k1, rubric_version=rv_k1, external_id="crit1", text="Recommends an ECG")
    crit3 = Criterion.objects.create(project=p2, rubric_version=rv_p2, external_id="crit3", text="Is kind")
    r1 = Response.objects.create(project=p1, case=k1, external_id="r1", model="m", text="An ECG now.")
    r3 = Response.objects.create(project=p2, case=k3, external_id="r3", model="m", text="There, there.")
    g1 = Cohort.objects.create(project=p1, name="g1", position=0)
    g2 = Cohort.objects.create(project=p1, name="g2", position=1)
    g3 = Cohort.objects.create(project=p2, name="g3", position=0)
    for cohort, name, role in ((g1, "ann1", "annotator"), (g1, "chk_a", "checker"), (g1, "chk_b", "checker"),
                               (g2, "ann2", "annotator"), (g2, "chk_c", "checker"), (g3, "ann1", "annotator")):
        CohortMembership.objects.create(project=cohort.project, cohort=cohort, user=users[name], role=role)
    a1 = Assignment.objects.create(project=p1, cohort=g1, response=r1, annotator=users["ann1"], status="checked")
    a2 = Assignment.objects.create(project=p1, cohort=g2, response=r1, annotator=users["ann2"], status="checked")
    a3 = Assignment.objects.create(project=p2, cohort=g3, response=r3, annotator=users["ann1"], status="submitted")

    def label(cohort, name, role, assignment, **decision):
        project = cohort.project
        response, criterion = (r1, crit1) if project == p1 else (r3, crit3)
        return Label.objects.create(project=project, response=response, criterion=criterion,
                                    rubric_version_id=criterion.rubric_version_id, cohort=cohort, annotator=users[name],
                                    role=role, assignment=assignment, **decision)

    ann = label(g1, "ann1", "annotator", a1, verdict="met")
    # chk_b's label is the older row (lower id) but the most recently changed one: it is kept.
    kept = label(g1, "chk_b", "checker", a1, verdict="not_met", rationale="No contraindication check.")
    merged = label(g1, "chk_a", "checker", a1, verdict="met", rationale="Fine.", evidence=["An ECG now."])
    other_cohort = label(g2, "chk_c", "checker", a2, verdict="met")
    ann2 = label(g2, "ann2", "annotator", a2, verdict="met")
    p2_label = label(g3, "ann1", "annotator", a3, verdict="met")
    now = timezone.now()
    Label.objects.filter(pk=merged.pk).update(updated_at=now - timedelta(hours=2))
    Label.objects.filter(pk=kept.pk).update(updated_at=now - timedelta(hours=1))

    def history(lbl, action, by, new, old=None):
        return LabelHistory.objects.create(label=lbl, changed_by=users[by], action=action, old=old, new=new).pk

    histories = {
        "ann": [history(ann, "set", "ann1", {"verdict": "met"})],
        "kept": [history(kept, "override", "chk_b", {"verdict": "not_met"}, {"verdict": "met"})],
        "merged": [history(merged, "confirm", "chk_a", {"verdict": "not_met"}),
                   history(merged, "override", "chk_a", {"verdict": "met"}, {"verdict": "not_met"})],
        "other_cohort": [history(other_cohort, "confirm", "chk_c", {"verdict": "met"})],
        "p2": [history(p2_label, "set", "ann1", {"verdict": "met"})],
    }
    merged_state, kept_state = _state(Label.objects.get(pk=merged.pk)), _state(Label.objects.get(pk=kept.pk))
    return {
        "users": {name: u.pk for name, u in users.items()}, "projects": (p1.pk, p2.pk), "cases": (k1.pk, k2.pk, k3.pk),
        "versions": (rv_k1.pk, rv_p1.pk, rv_p2.pk), "response": r1.pk, "criterion": crit1.pk, "cohorts": (g1.pk, g2.pk),
        "assignments": (a1.pk, a2.pk, a3.pk),
        "labels": {"ann": ann.pk, "kept": kept.pk, "merged": merged.pk, "other_cohort": other_cohort.pk, "ann2": ann2.pk,
                   "p2": p2_label.pk},
        "histories": histories, "merged_state": merged_state, "kept_state": kept_state,
    }


class Migration0004Tests:  # the database is ``migrated``'s, unblocked for the module (see there)
    def test_two_checker_labels_of_a_cohort_merge_into_the_most_recently_changed(self, migrated):
        old = migrated
        from annotation.models import Label, LabelHistory

        ids = old["labels"]
        checker = Label.objects.filter(response_id=old["response"], criterion_id=old["criterion"], cohort_id=old["cohorts"][0],
                                       role="checker")
        assert list(checker.values_list("pk", "annotator_id", "verdict")) == [(ids["kept"], old["users"]["chk_b"], "not_met")]
        assert not Label.objects.filter(pk=ids["merged"]).exists()
        # The other cohort's checker label is its own decision, not a duplicate.
        assert Label.objects.filter(pk=ids["other_cohort"], role="checker").exists()

        history = list(LabelHistory.objects.filter(label_id=ids["kept"]).order_by("id"))
        moved = old["histories"]["kept"] + old["histories"]["merged"]
        assert [h.pk for h in history[:-1]] == moved
        assert [h.action for h in history[:-1]] == ["override", "confirm", "override"]
        merge = history[-1]
        assert (merge.action, merge.changed_by_id, merge.project_id) == ("merge", None, old["projects"][0])
        assert merge.old == old["merged_state"]
        assert merge.old == {"verdict": "met", "option": None, "value": None, "rationale": "Fine.", "evidence": ["An ECG now."],
                             "role": "checker"}
        assert merge.new == old["kept_state"]
        assert merge.new["verdict"] == "not_met" and merge.new["rationale"] == "No contraindication check."
        assert LabelHistory.objects.filter(action="merge").count() == 1

    def test_checker_labels_lose_their_assignment_and_annotator_labels_keep_it(self, migrated):
        old = migrated
        from annotation.models import Label

        ids, (a1, a2, a3) = old["labels"], old["assignments"]
        assignments = dict(Label.objects.values_list("pk", "assignment_id"))
        assert assignments == {ids["ann"]: a1, ids["kept"]: None, ids["other_cohort"]: None, ids["ann2"]: a2, ids["p2"]: a3}

    def test_every_history_row_gets_the_project_of_its_label(self, migrated):
        old = migrated
        from annotation.models import LabelHistory

        p1, p2 = old["projects"]
        rows = list(LabelHistory.objects.values_list("pk", "project_id", "label__project_id"))
        assert len(rows) == 7  # six rows built, one merge row added
        assert all(project == label_project for _, project, label_project in rows)
        projects = {pk: project for pk, project, _ in rows}
        assert projects[old["histories"]["p2"][0]] == p2
        assert {projects[pk] for key in ("ann", "kept", "merged", "other_cohort") for pk in old["histories"][key]} == {p1}

    def test_every_case_points_at_its_own_current_rubric_else_the_projects(self, migrated):
        old = migrated
        from annotation.models import Case

        (k1, k2, k3), (rv_k1, rv_p1, rv_p2) = old["cases"], old["versions"]
        assert dict(Case.objects.values_list("pk", "rubric_version_id")) == {k1: rv_k1, k2: rv_p1, k3: rv_p2}
