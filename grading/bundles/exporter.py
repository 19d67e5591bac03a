"""Exporting a project as a bundle plus its gold set (SPEC §4, issue 10 point 7): ``project.json``,
the JSON Lines files (cases, responses, labels, judgments, adjudications), ``gold.jsonl`` with one
slice per difficulty, ``gold.csv``, and ``manifest.json`` with the format version, the rubric
version hashes, line counts, counts by provenance and the sha256 of every file.

One pass over the responses in position order, a chunk at a time: each chunk's labels are read
once and give both its lines of ``labels.jsonl`` and its gold decisions (the cohort and gold
rules of ``grading.metrics.decisions``), so memory stays flat whatever the project's size and no
table is sorted by the database. A large project's responses are split between two processes
(``export_processes``, ``evalsite.forking``) whose files are joined in order.

The bundle carries everything a project's figures rest on, so that importing it rebuilds them:
cases excluded by quality control are in the bundle's files with their quality-control status
(``quality.jsonl``; a judge's seeded few-shot split is drawn over all cases, so it is drawn again
the same), and project.json names each user's role and cohort (names only, never a secret). The
gold files leave excluded cases out: they are the gold set.
Output is deterministic (fixed order, sorted keys), so export → import into an empty database →
export gives the same bytes, apart from the manifest's timestamp.
"""
import gc
import hashlib
import io
import json
import marshal
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Case, CaseQuality, Cohort, Criterion, Label, Project, Response, RubricVersion
from annotation.selectors import labels_final
from annotation.vocabulary import PROVENANCES, UNRESOLVED
from evalsite.forking import Forked, fork_allowed
from evalsite.spreadsheet import csv_rows, csv_writer

from ..metrics.decisions import cohort_decide, decision_fields, gold_decide
from ..models import Adjudication, Judge, Judgment
from .export_io import (
    JSONL,
    FileWriter,
    collector_per_chunk,
    cursor_rows,
    json_line,
    json_list,
    part_name,
)
from .gold_tables import gold_tables_write
from .project_spec import project_spec, rubric_hashes

FORMAT_VERSION = 2
QUALITY_FIELDS = ("excluded", "flagged", "screen_accuracy_pct", "screen_threshold_pct", "screen_source", "screen_models",
                  "audit_sampled", "audit_outcome", "audit_note")
DIFFICULTIES = ("low", "medium", "high")
CHUNK = 500  # responses per pass of the loop: about 15,000 items of a 30-criterion rubric
GOLD_ROWS = "gold.rows"  # the gold table's rows as the chunks made them (marshal), read back for Parquet and XLSX
ITEM_FILES = ("labels.jsonl", "judgments.jsonl", "adjudications.jsonl", "gold.jsonl",
              *(f"gold.{d}.jsonl" for d in DIFFICULTIES), "gold.csv", GOLD_ROWS)
Progress = Callable[[float, str], None]


def export_processes(n_responses: int) -> int:
    """How many processes export ``n_responses`` responses: ``EVALSITE_EXPORT_PROCESSES`` (default:
    up to 2, one per core) when the project has at least ``EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES``
    and the connection may be shared with forked processes (``fork_allowed``), else 1. Each
    process gets at least one chunk of responses."""
    wanted = getattr(settings, "EVALSITE_EXPORT_PROCESSES", None) or min(2, os.cpu_count() or 1)
    if wanted <= 1 or n_responses < getattr(settings, "EVALSITE_EXPORT_PARALLEL_MIN_RESPONSES", 2000) or not fork_allowed():
        return 1
    return max(1, min(wanted, n_responses // CHUNK))


class _Export:
    def __init__(self, project: Project, out: Path, progress: Progress | None):
        self.project, self.out, self.progress = project, out, progress or (lambda fraction, stage: None)
        self.files: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.excluded = set(CaseQuality.objects.filter(project=project, excluded=True).values_list("case_id", flat=True))
        self.case_info = {  # pk -> (external id, difficulty)
            pk: (ext, difficulty) for pk, ext, difficulty in
            Case.objects.filter(project=project).values_list("pk", "external_id", "difficulty")
        }
        self.criteria = {  # pk -> (external id, order); order = (case first or project rubric, position)
            pk: (ext, (case_id or 0, position)) for pk, ext, case_id, position in
            Criterion.objects.filter(project=project).values_list("pk", "external_id", "case_id", "position")
        }
        # The same order as one integer per criterion, for sorting a chunk's rows with numpy.
        self.criterion_rank = {pk: i for i, pk in enumerate(sorted(self.criteria, key=lambda pk: self.criteria[pk][1]))}
        self.responses = [  # (pk, external id, case pk, model) in position order
            row for row in Response.objects.filter(project=project).order_by("position", "pk")
            .values_list("pk", "external_id", "case_id", "model")
        ]
        self.cohorts = dict(Cohort.objects.filter(project=project).values_list("pk", "name"))
        self.cohort_order = {pk: i for i, pk in enumerate(Cohort.objects.filter(project=project).values_list("pk", flat=True))}
        self.judges = dict(Judge.objects.filter(project=project).values_list("pk", "name"))
        self.judge_models = dict(Judge.objects.filter(project=project).values_list("pk", "model"))
        self.usernames: dict[int, str] = {}
        self.provenance = dict.fromkeys(PROVENANCES, 0)
        self._fields: dict[tuple, dict] = {}
        self.not_written: dict[str, str] = {}  # a file this export could not write, and why

    def fields(self, verdict, option, value) -> dict:
        """``decision_fields`` of a decision, computed once per distinct decision (a project has
        a few dozen; an export asks two and a half million times). NaN, pandas' missing value, is
        None here as it is in ``decision_fields``. The dict is shared: read it, never change it."""
        key = (None if verdict != verdict else verdict, None if option != option else option,
               None if value != value else value)
        found = self._fields.get(key)
        if found is None:
            found = self._fields[key] = decision_fields(verdict=key[0], option=key[1], value=key[2])
        return found

    def finish(self, writer: FileWriter) -> None:
        self.files[writer.name] = writer.close()
        self.counts[writer.name] = writer.count

    def run(self) -> dict:
        text = json.dumps(project_spec(self.project), ensure_ascii=False, sort_keys=True, indent=2) + "\n"
        (self.out / "project.json").write_text(text, encoding="utf-8")
        self.files["project.json"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self._cases()
        self._responses()
        self._quality()
        self.progress(0.05, "cases and responses")
        self._items()
        self._gold_tables()
        manifest = {
            "format_version": FORMAT_VERSION, "project": self.project.slug, "exported_at": timezone.now().isoformat(),
            "rubric_versions": rubric_hashes(self.project, {pk: ext for pk, (ext, _) in self.case_info.items()}),
            "counts": self.counts, "provenance": self.provenance, "excluded_cases": len(self.excluded), "files": self.files,
            **({"not_written": self.not_written} if self.not_written else {}),
        }
        (self.out / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8")
        return {"files": self.files, "counts": self.counts, "provenance": self.provenance, "excluded_cases": len(self.excluded)}

    def _cases(self) -> None:
        writer = FileWriter(self.out, "cases.jsonl")
        # Each case's current rubric as frozen (``RubricVersion.content``: the criteria's bundle form,
        # ``criterion_spec``, in order), read as JSON instead of as 75,000 model instances.
        criteria_by_case = {case_id: json_list(content) for case_id, content in cursor_rows(
            RubricVersion.objects.filter(project=self.project, is_current=True, case__isnull=False)
            .values_list("case_id", "content"))}
        extras = {ext: (guidance, variants) for ext, guidance, variants in
                  Criterion.objects.filter(project=self.project, case__isnull=False)
                  .exclude(guidance="", variants={}).order_by().values_list("external_id", "guidance", "variants")}
        if extras:  # kept on the criteria, outside the frozen content (``specs.criterion_guidance``, ``criterion_variants``)
            for criteria in criteria_by_case.values():
                for spec in criteria:
                    guidance, variants = extras.get(spec["criterion_id"], ("", {}))
                    if guidance:
                        spec["guidance"] = guidance
                    if variants:
                        spec["variants"] = variants
        for case in Case.objects.filter(project=self.project).order_by("position", "pk").iterator(chunk_size=2000):
            obj = {"case_id": case.external_id}
            if case.messages is not None:
                obj["messages"] = case.messages
            else:
                obj["prompt"] = case.prompt
            if case.reference_answer:
                obj["reference_answer"] = case.reference_answer
            if case.metadata:
                obj["metadata"] = case.metadata
            if criteria_by_case.get(case.pk):
                obj["criteria"] = criteria_by_case[case.pk]
            writer.write(json_line(obj))
        self.finish(writer)

    def _responses(self) -> None:
        writer = FileWriter(self.out, "responses.jsonl")
        rows = Response.objects.filter(project=self.project).order_by("position", "pk").values_list(
            "external_id", "case_id", "model", "author_kind", "text")
        for ext, case_id, model, kind, text in cursor_rows(rows, 2000):
            writer.write(json_line({"response_id": ext, "case_id": self.case_info[case_id][0], "model": model,
                                    "author_kind": kind, "text": text}))
        self.finish(writer)

    def _quality(self) -> None:
        """quality.jsonl: each case's quality-control record (screening, audit, exclusion)."""
        writer = FileWriter(self.out, "quality.jsonl")
        rows = CaseQuality.objects.filter(project=self.project).order_by("case__position", "case_id").values_list(
            "case_id", *QUALITY_FIELDS, "audit_by_id", "audit_at")
        for case_id, *values, audit_by, audit_at in rows:
            obj = {"case_id": self.case_info[case_id][0], **dict(zip(QUALITY_FIELDS, values))}
            obj["audit_by"] = self._username(audit_by)
            obj["audit_at"] = audit_at.isoformat() if audit_at else None
            writer.write(json_line(obj))
        self.finish(writer)

    def _username(self, user_id) -> str | None:
        if user_id is None:
            return None
        if user_id not in self.usernames:
            self.usernames.update(get_user_model().objects.filter(pk=user_id).values_list("pk", "username"))
        return self.usernames.get(user_id)

    def _items(self) -> None:
        """labels, judgments, adjudications, gold (and slices, csv), a chunk of responses at a time.
        A large project is split into contiguous ranges of responses, one per process
        (``export_processes``): this process writes the first range straight into the files, each
        forked process writes its range into part files, appended in order afterwards. Ranges
        are cut in response order and every sort is by position, so the bytes are the same."""
        n = len(self.responses)
        processes = export_processes(n)
        bounds = [n * k // processes for k in range(processes + 1)]
        writers = {name: FileWriter(self.out, name) for name in ITEM_FILES}
        self.usernames.update(get_user_model().objects.filter(memberships__project=self.project).values_list("pk", "username"))
        with collector_per_chunk():
            self._ranges(bounds, writers)
        for writer in writers.values():
            self.finish(writer)

    def _ranges(self, bounds: list[int], writers: dict) -> None:
        processes = len(bounds) - 1
        children = [Forked(lambda k=k: self._part(k, bounds[k], bounds[k + 1])) for k in range(1, processes)]
        try:
            self._range(bounds[0], bounds[1], writers, header=True,
                        progress=lambda done: self.progress(0.05 + 0.9 * done, "labels, judgments and gold"))
            for k, child in enumerate(children, 1):
                part = child.result()
                for name in ITEM_FILES:
                    writers[name].append(self.out / part_name(name, k), part["counts"][name])
                for provenance, count in part["provenance"].items():
                    self.provenance[provenance] += count
        except BaseException:
            for child in children:
                child.kill()
            raise
        finally:
            for k in range(1, processes):
                for name in ITEM_FILES:
                    (self.out / part_name(name, k)).unlink(missing_ok=True)

    def _part(self, k: int, lo: int, hi: int) -> dict:
        """The work of forked process ``k``: responses ``lo``..``hi`` into part files."""
        self.provenance = dict.fromkeys(PROVENANCES, 0)
        writers = {name: FileWriter(self.out, part_name(name, k)) for name in ITEM_FILES}
        self._range(lo, hi, writers, header=False, progress=None)
        for writer in writers.values():
            writer.close()
        return {"counts": {name: writer.count for name, writer in writers.items()}, "provenance": self.provenance}

    def _range(self, lo: int, hi: int, writers: dict, *, header: bool, progress) -> None:
        cohort_names = self.cohort_names()
        csv_buffer = io.StringIO()
        csv_out = csv_writer(csv_buffer)
        if header:
            csv_out.writerow(self.gold_columns())
        slices = {d: writers[f"gold.{d}.jsonl"] for d in DIFFICULTIES}
        for start in range(lo, hi, CHUNK):
            chunk = self.responses[start:min(start + CHUNK, hi)]
            info = {pk: (ext, case_id, model, start + i) for i, (pk, ext, case_id, model) in enumerate(chunk)}
            ids = list(info)
            labels = self._labels(ids, info, writers["labels.jsonl"])
            self._judgments(ids, info, writers["judgments.jsonl"])
            adjudications = self._adjudications(ids, info, writers["adjudications.jsonl"])
            if self.excluded:  # the bundle keeps excluded cases; the gold set does not
                kept = {pk for pk in ids if info[pk][1] not in self.excluded}
                if len(kept) < len(ids):
                    labels = labels[labels["response_id"].isin(kept)]
                    adjudications = {key: value for key, value in adjudications.items() if key[0] in kept}
            rows = self._gold(labels, adjudications, info, writers["gold.jsonl"], slices, csv_out, cohort_names,
                              writers[GOLD_ROWS])
            writers["gold.csv"].write(csv_buffer.getvalue().encode("utf-8"), lines=rows + (1 if header and start == lo else 0))
            csv_buffer.seek(0)
            csv_buffer.truncate()
            del labels, adjudications
            gc.collect()  # the chunk's cycles (see export_io.collector_per_chunk)
            if progress:
                progress(min(1.0, (start + len(chunk) - lo) / max(1, hi - lo)))

    def _labels(self, ids, info, writer) -> pd.DataFrame:
        rows = list(cursor_rows(labels_final(Label.objects.filter(response_id__in=ids)).values_list(
            "response_id", "criterion_id", "cohort_id", "annotator_id", "role", "verdict", "option_label", "value",
            "rationale", "evidence", "time_spent_seconds")))
        rank, cohort_order = self.criterion_rank, self.cohort_order
        for user in {r[3] for r in rows} - self.usernames.keys():
            self._username(user)
        usernames = self.usernames
        rows.sort(key=lambda r: (info[r[0]][3], rank[r[1]], cohort_order[r[2]], usernames.get(r[3]) or ""))
        criteria, cohorts, lines = self.criteria, self.cohorts, []
        dumps, append, fields = orjson.dumps, lines.append, self.fields
        for r, c, cohort, user, role, verdict, option, value, rationale, evidence, seconds in rows:
            obj = {"response_id": info[r][0], "criterion_id": criteria[c][0], "cohort": cohorts[cohort],
                   "annotator": usernames.get(user), "role": role, **fields(verdict, option, value)}
            if rationale:
                obj["rationale"] = rationale
            if evidence and evidence != "[]":
                obj["evidence"] = json_list(evidence)
            if seconds is not None:
                obj["time_spent_seconds"] = seconds
            append(dumps(obj, option=JSONL))
        writer.write_lines(lines)
        columns = list(zip(*rows)) if rows else [()] * 8
        return pd.DataFrame({
            "response_id": np.array(columns[0], dtype=np.int64), "criterion_id": np.array(columns[1], dtype=np.int64),
            "cohort": np.array(columns[2], dtype=np.int64), "role": np.array(columns[4], dtype=object),
            "verdict": np.array(columns[5], dtype=object), "option": np.array(columns[6], dtype=object),
            "value": np.array(columns[7], dtype=float),
        })

    def _judgments(self, ids, info, writer) -> None:
        rows = list(cursor_rows(Judgment.objects.filter(response_id__in=ids, judge__project=self.project).values_list(
            "response_id", "criterion_id", "judge_id", "condition", "sample", "verdict", "option_label", "value",
            "explanation", "evidence", "raw", "tokens_in", "tokens_out", "latency_ms")))
        rank, judges = self.criterion_rank, self.judges
        rows.sort(key=lambda r: (info[r[0]][3], judges[r[2]], rank[r[1]], r[4]))
        criteria, models, lines = self.criteria, self.judge_models, []
        dumps, append, fields = orjson.dumps, lines.append, self.fields
        for r, c, judge, condition, sample, verdict, option, value, expl, evidence, raw, t_in, t_out, latency in rows:
            obj = {"response_id": info[r][0], "criterion_id": criteria[c][0], "judge": judges[judge],
                   "judge_model": models[judge], "condition": condition, "sample": sample, "explanation": expl,
                   "evidence": json_list(evidence), "raw": raw, **fields(verdict, option, value)}
            if t_in or t_out:
                obj["tokens_in"], obj["tokens_out"] = t_in, t_out
            if latency is not None:
                obj["latency_ms"] = latency
            append(dumps(obj, option=JSONL))
        writer.write_lines(lines)

    def _adjudications(self, ids, info, writer) -> dict:
        rows = list(cursor_rows(Adjudication.objects.filter(response_id__in=ids).values_list(
            "response_id", "criterion_id", "verdict", "option_label", "value", "adjudicator_id", "confidence", "category",
            "note")))
        rows.sort(key=lambda r: (info[r[0]][3], self.criteria[r[1]][1]))
        out = {}
        for r, c, verdict, option, value, user, confidence, category, note in rows:
            obj = {"response_id": info[r][0], "criterion_id": self.criteria[c][0], "adjudicator": self._username(user),
                   "confidence": confidence, "category": category, "note": note,
                   **decision_fields(verdict=verdict, option=option, value=value)}
            writer.write(json_line(obj))
            out[(r, c)] = (verdict, option, value, obj["adjudicator"], confidence, category, note)
        return out

    def _gold(self, labels: pd.DataFrame, adjudications: dict, info, writer, slices, csv_out, cohort_names, table) -> int:
        """Gold lines (and slices and CSV rows) of one chunk; returns how many."""
        keys = ["response_id", "criterion_id"]
        cohorts = cohort_decide(labels, keys=[*keys, "cohort"]) if len(labels) else labels.assign(
            unresolved=False, invalid=0, n=0)
        cohorts = cohorts.assign(cohort=cohorts["cohort"].map(self.cohorts))
        adjudicated = pd.DataFrame.from_records([(r, c, v, o, x) for (r, c), (v, o, x, *_) in adjudications.items()],
                                                columns=[*keys, "verdict", "option", "value"])
        adjudicated["value"] = adjudicated["value"].astype(float)
        gold = gold_decide(cohorts, adjudicated, keys=keys)
        n = len(gold)
        if not n:
            return 0
        responses, criteria = gold["response_id"].to_numpy(np.int64), gold["criterion_id"].to_numpy(np.int64)
        rank = self.criterion_rank
        order = np.lexsort((np.fromiter((rank[c] for c in criteria), np.int64, n),
                            np.fromiter((info[r][3] for r in responses), np.int64, n)))
        columns = (gold[name].to_numpy(dtype=object)[order].tolist() for name in (
            "response_id", "criterion_id", "provenance", "cohort_decisions", "verdict", "option", "value"))
        case_info, criterion_info, counted = self.case_info, self.criteria, self.provenance
        no_adjudication = (None, "", "", "")
        dumps, lines, by_difficulty = orjson.dumps, [], {d: [] for d in slices}
        csv_rows_of_chunk = []
        for r, c, provenance, decided, verdict, option, value in zip(*columns):
            ext, case_id, model, _ = info[r]
            extra = adjudications.get((r, c))
            adjudicator, confidence, category, note = extra[3:] if extra else no_adjudication
            fields = self.fields(verdict, option, value)
            criterion = criterion_info[c][0]
            line = dumps({"response_id": ext, "criterion_id": criterion, "provenance": provenance,
                          "cohort_decisions": decided, "adjudicator": adjudicator, "confidence": confidence,
                          "category": category, "note": note, **fields}, option=JSONL)
            lines.append(line)
            case_ext, difficulty = case_info[case_id]
            if difficulty in by_difficulty:
                by_difficulty[difficulty].append(line)
            counted[provenance] += 1
            csv_rows_of_chunk.append((ext, criterion, case_ext, model, difficulty, fields.get("verdict"), fields.get("option"),
                             fields.get("value"), provenance, *[_decision_cell(decided.get(name)) for name in cohort_names],
                             adjudicator, confidence, category, note))
        writer.write_lines(lines)
        for difficulty, part in by_difficulty.items():
            slices[difficulty].write_lines(part)
        csv_out.writerows(csv_rows(csv_rows_of_chunk))
        table.write(marshal.dumps(csv_rows_of_chunk), lines=n)
        return n

    def cohort_names(self) -> list[str]:
        return [self.cohorts[pk] for pk in sorted(self.cohorts, key=self.cohort_order.get)]

    def gold_columns(self) -> list[str]:
        """The columns of gold.csv, gold.xlsx and gold.parquet (README, "Gold files")."""
        return ["response_id", "criterion_id", "case_id", "model", "difficulty", "verdict", "option", "value",
                "provenance", *[f"cohort:{name}" for name in self.cohort_names()], "adjudicator", "confidence",
                "category", "note"]

    def _gold_tables(self) -> None:
        """gold.parquet and gold.xlsx from the gold rows the chunks kept (``gold_tables_write``)."""
        self.progress(0.96, "gold as Parquet and XLSX")
        n = self.counts.pop(GOLD_ROWS)
        self.files.pop(GOLD_ROWS)
        written, self.not_written = gold_tables_write(out=self.out, source=self.out / GOLD_ROWS, columns=self.gold_columns(),
                                                      n=n)
        for name, digest in written.items():
            self.files[name], self.counts[name] = digest, n


def _decision_cell(fields: dict | None) -> str:
    """A cohort decision's gold.csv cell: the stored name, option label or value as the bundle
    carries it (not the words pages show), "unresolved" for a tie, "" where the cohort has none."""
    if fields is None:
        return ""
    value = next(iter(fields.values()))
    return UNRESOLVED if value is None else str(value)


def gold_export(*, project: Project, out_dir: str | Path, progress: Progress | None = None) -> dict:
    """Write the bundle and gold files of ``project`` into ``out_dir``; return files, counts,
    provenance counts and the number of excluded cases. ``progress(fraction, stage)`` is called as
    the export goes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return _Export(project, out, progress).run()


def gold_export_zip(*, project: Project, zip_path: str | Path, progress: Progress | None = None) -> dict:
    """``gold_export`` into a directory next to ``zip_path``, then one .zip of it (fast deflate),
    the directory removed afterwards. The manifest inside lists every file's sha256."""
    target = Path(zip_path)
    work = target.with_suffix(".parts")
    try:
        result = gold_export(project=project, out_dir=work, progress=lambda f, s: progress and progress(f * 0.9, s))
        names = ["manifest.json", "project.json", *sorted(n for n in result["files"] if n != "project.json")]
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for i, name in enumerate(names):
                archive.write(work / name, arcname=f"{project.slug}/{name}")
                if progress:
                    progress(0.9 + 0.1 * (i + 1) / len(names), "zip")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result
