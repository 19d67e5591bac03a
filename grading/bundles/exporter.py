"""Exporting a project as a bundle plus its gold set (SPEC §4): ``project.json``, the JSON
Lines files, ``gold.jsonl`` and one gold slice per difficulty, and ``manifest.json`` with the
format version, rubric-version hashes, line counts and the sha256 of every file.

Output is deterministic (fixed order, sorted keys), so export → import into an empty
database → export gives the same bytes, apart from the manifest's timestamp.
"""
import hashlib
import json
from pathlib import Path

from django.utils import timezone

from annotation.models import Case, Cohort, Criterion, Label, Project, Response, RubricVersion
from annotation.rubrics import criterion_spec

from ..models import Judge, Judgment
from ..selectors import decision_fields, decision_key, gold_frame

FORMAT_VERSION = 1
DIFFICULTIES = ("low", "medium", "high")


def _line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


class _Writer:
    """Writes one file while hashing and counting its lines."""

    def __init__(self, directory: Path, name: str):
        self.name, self.count = name, 0
        self._digest = hashlib.sha256()
        self._fh = open(directory / name, "w", encoding="utf-8", newline="\n")

    def write(self, obj: dict) -> None:
        text = _line(obj)
        self._fh.write(text)
        self._digest.update(text.encode("utf-8"))
        self.count += 1

    def close(self) -> str:
        self._fh.close()
        return self._digest.hexdigest()


def gold_export(*, project: Project, out_dir: str | Path) -> dict:
    """Write the bundle and gold files of ``project`` into ``out_dir``; return files and counts."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    counts: dict[str, int] = {}

    def finish(writer: _Writer) -> None:
        files[writer.name] = writer.close()
        counts[writer.name] = writer.count

    project_json = json.dumps(_project_spec(project), ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    (out / "project.json").write_text(project_json, encoding="utf-8")
    files["project.json"] = hashlib.sha256(project_json.encode("utf-8")).hexdigest()

    case_ids = dict(Case.objects.filter(project=project).values_list("pk", "external_id"))
    criterion_ids = dict(Criterion.objects.filter(project=project).values_list("pk", "external_id"))
    response_info = {  # pk -> (external id, case pk, position), shared by every file below
        pk: (ext, case_id, position)
        for pk, ext, case_id, position in Response.objects.filter(project=project).values_list(
            "pk", "external_id", "case_id", "position"
        )
    }

    writer = _Writer(out, "cases.jsonl")
    criteria_by_case: dict[int, list[dict]] = {}
    for criterion in Criterion.objects.filter(project=project, case__isnull=False).order_by("case_id", "position"):
        criteria_by_case.setdefault(criterion.case_id, []).append(criterion_spec(criterion))
    for case in Case.objects.filter(project=project).order_by("position", "pk").iterator(chunk_size=2000):
        obj = {"case_id": case.external_id}
        if case.messages is not None:
            obj["messages"] = case.messages
        else:
            obj["prompt"] = case.prompt
        if case.reference_answer:
            obj["reference_answer"] = case.reference_answer
        if case.metadata:
            obj["metadata"] = case.metadata
        if case.pk in criteria_by_case:
            obj["criteria"] = criteria_by_case[case.pk]
        writer.write(obj)
    finish(writer)

    writer = _Writer(out, "responses.jsonl")
    for ext, case_id, model, kind, text in (
        Response.objects.filter(project=project).order_by("position", "pk")
        .values_list("external_id", "case_id", "model", "author_kind", "text").iterator(chunk_size=5000)
    ):
        writer.write({"response_id": ext, "case_id": case_ids[case_id], "model": model, "author_kind": kind, "text": text})
    finish(writer)

    writer = _Writer(out, "labels.jsonl")
    labels = (
        Label.objects.filter(project=project)
        .order_by("response__position", "criterion__position", "cohort__position", "annotator__username")
        .values_list("response_id", "criterion_id", "cohort__name", "annotator__username", "role", "verdict",
                     "option_label", "value", "rationale", "evidence", "time_spent_seconds")
    )
    for r, c, cohort, user, role, verdict, option, value, rationale, evidence, seconds in labels.iterator(chunk_size=5000):
        obj = {"response_id": response_info[r][0], "criterion_id": criterion_ids[c], "cohort": cohort, "annotator": user, "role": role}
        obj.update(decision_fields(decision_key(verdict, option, value)))
        if rationale:
            obj["rationale"] = rationale
        if evidence:
            obj["evidence"] = evidence
        if seconds is not None:
            obj["time_spent_seconds"] = seconds
        writer.write(obj)
    finish(writer)

    writer = _Writer(out, "judgments.jsonl")
    judgments = (
        Judgment.objects.filter(judge__project=project)
        .order_by("judge__name", "response__position", "criterion__position", "sample")
        .values_list("response_id", "criterion_id", "judge__name", "judge__model", "condition", "sample", "verdict",
                     "option_label", "value", "explanation", "evidence", "raw", "tokens_in", "tokens_out", "latency_ms")
    )
    for r, c, judge, model, condition, sample, verdict, option, value, expl, evidence, raw, t_in, t_out, latency in judgments.iterator(chunk_size=5000):
        obj = {"response_id": response_info[r][0], "criterion_id": criterion_ids[c], "judge": judge, "judge_model": model,
               "condition": condition, "sample": sample, "explanation": expl, "evidence": evidence, "raw": raw}
        obj.update(decision_fields(decision_key(verdict, option, value)))
        if t_in or t_out:
            obj.update(tokens_in=t_in, tokens_out=t_out)
        if latency is not None:
            obj["latency_ms"] = latency
        writer.write(obj)
    finish(writer)

    _write_gold(project, out, response_info, criterion_ids, finish)

    manifest = {
        "format_version": FORMAT_VERSION,
        "project": project.slug,
        "exported_at": timezone.now().isoformat(),
        "rubric_versions": _rubric_hashes(project, case_ids),
        "counts": counts,
        "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    return {"files": files, "counts": counts}


def _write_gold(project, out, response_info, criterion_ids, finish) -> None:
    gold = gold_frame(project=project)
    difficulty = dict(Case.objects.filter(project=project).values_list("pk", "difficulty"))
    criterion_order = {
        pk: (case_id or 0, position)
        for pk, case_id, position in Criterion.objects.filter(project=project).values_list("pk", "case_id", "position")
    }
    writers = {"": _Writer(out, "gold.jsonl")}
    writers.update({d: _Writer(out, f"gold.{d}.jsonl") for d in DIFFICULTIES})
    ordered = sorted(gold.itertuples(index=False), key=lambda g: (response_info[g.response_id][2], criterion_order[g.criterion_id]))
    for g in ordered:
        ext, case_id, _ = response_info[g.response_id]
        obj = {
            "response_id": ext,
            "criterion_id": criterion_ids[g.criterion_id],
            "provenance": g.provenance,
            "cohort_decisions": {name: decision_fields(key) for name, key in sorted(g.cohort_decisions.items())},
            "adjudicator": g.adjudicator,
            "note": g.note,
        }
        obj.update(decision_fields(g.decision))
        writers[""].write(obj)
        if difficulty[case_id] in writers:
            writers[difficulty[case_id]].write(obj)
    for writer in writers.values():
        finish(writer)


def _rubric_hashes(project: Project, case_ids: dict[int, str]) -> dict:
    hashes = {"project": None, "cases": {}}
    for case_id, digest in RubricVersion.objects.filter(project=project, is_current=True).values_list("case_id", "content_hash"):
        if case_id is None:
            hashes["project"] = digest
        else:
            hashes["cases"][case_ids[case_id]] = digest
    return hashes


def _project_spec(project: Project) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "description": project.description,
        "blind": project.blind,
        "coverage_k": project.coverage_k,
        "overlap": project.overlap,
        "low_agreement_threshold": project.low_agreement_threshold,
        "show_reference_answer": project.show_reference_answer,
        "rubric": [criterion_spec(c) for c in Criterion.objects.filter(project=project, case__isnull=True).order_by("position")],
        "cohorts": [{"name": name} for name in Cohort.objects.filter(project=project).values_list("name", flat=True)],
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
