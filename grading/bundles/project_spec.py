"""What a bundle's project.json and its manifest's rubric versions say of a project: its settings,
rubric, cohorts with their members, roles by user name and judges (``project_spec``), and the hash
of each current rubric version (``rubric_hashes``). Written by the exporter, read back by the
importer (``grading.bundles.importer``, ``people``)."""
from annotation.models import Cohort, Criterion, Project, ProjectRole, RubricVersion
from annotation.projects import QUALITY_SETTINGS
from annotation.rubrics import criterion_bundle_spec

from ..models import Judge


def rubric_hashes(project: Project, case_ids: dict[int, str]) -> dict:
    hashes = {"project": None, "cases": {}}
    for case_id, digest in RubricVersion.objects.filter(project=project, is_current=True).values_list("case_id", "content_hash"):
        if case_id is None:
            hashes["project"] = digest
        elif case_id in case_ids:
            hashes["cases"][case_ids[case_id]] = digest
    return hashes


def quality_spec(project: Project) -> dict:
    """The annotator-quality settings (``annotation.projects.QUALITY_SETTINGS``: check-item rate, alert
    threshold...) that differ from a new project's, so a bundle of a project that never used check
    items says nothing of them and one that did brings them back on import."""
    fields = {f.name: f for f in Project._meta.get_fields() if f.name in QUALITY_SETTINGS}
    return {name: getattr(project, name) for name in QUALITY_SETTINGS if getattr(project, name) != fields[name].default}


def project_spec(project: Project) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "description": project.description,
        "blind": project.blind,
        "coverage_k": project.coverage_k,
        "overlap": project.overlap,
        "low_agreement_threshold": project.low_agreement_threshold,
        "show_reference_answer": project.show_reference_answer,
        "hide_rater_names": project.hide_rater_names,
        **({"guidelines": project.guidelines} if project.guidelines else {}),
        **({"traits": project.traits} if project.traits else {}),
        **({"stratum_groups": project.stratum_groups} if project.stratum_groups else {}),
        **quality_spec(project),
        "rubric": [criterion_bundle_spec(c) for c in Criterion.objects.filter(project=project, case__isnull=True,
                                                                       rubric_version__is_current=True).order_by("position")],
        "cohorts": [{"name": cohort.name, "members": [{"user": m.user.username, "role": m.role} for m in
                                                     sorted(cohort.memberships.all(), key=lambda m: m.user.username)]}
                    for cohort in Cohort.objects.filter(project=project).prefetch_related("memberships__user")],
        "roles": [{"user": username, "role": role} for username, role in
                  ProjectRole.objects.filter(project=project).order_by("user__username").values_list("user__username", "role")],
        "judges": [
            {
                "name": j.name, "backend": j.backend, "model": j.model, "base_url": j.base_url,
                "api_key_env": j.api_key_env, "condition": j.condition, "temperature": j.temperature,
                "samples": j.samples, "concurrency": j.concurrency, "max_retries": j.max_retries,
                "price_in_per_mtok": float(j.price_in_per_mtok), "price_out_per_mtok": float(j.price_out_per_mtok),
                "settings": j.settings,
            }
            for j in Judge.objects.filter(project=project).order_by("name")
        ],
    }
