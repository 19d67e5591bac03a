"""Hostile bundles (issue 15, point 4): a zip with a path outside the bundle, a symbolic link, a
zip bomb, too much data, a gigantic line, a flood of blank lines, JSON nested past the parser's
depth, or values the database would refuse is refused with a clear error naming what is wrong,
writes nothing, and the importer's memory stays bounded, the same on SQLite and PostgreSQL."""
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from annotation.models import Label, Project
from grading.bundles import BundleError, bundle_import
from tests.bundles import bundle_parts, write_bundle

ROOT = Path(__file__).resolve().parents[3]


def _zip_of(folder: Path, target: Path, extra=()) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
        for info, data in extra:
            archive.writestr(info, data)
    return target


def _refused(path: Path, match: str) -> None:
    with pytest.raises(BundleError, match=match):
        bundle_import(path=path)
    assert not Project.objects.exists() and not Label.objects.exists()


@pytest.fixture
def folder(tmp_path):
    return write_bundle(tmp_path / "bundle")


@pytest.mark.parametrize("name", ["../evil.jsonl", "/etc/passwd", "sub/../../evil", "C:\\evil"])
def test_an_entry_outside_the_bundle_is_refused(db, folder, tmp_path, name):
    _refused(_zip_of(folder, tmp_path / "b.zip", [(name, "{}")]), "points outside the bundle")


def test_a_symbolic_link_entry_is_refused(db, folder, tmp_path):
    link = zipfile.ZipInfo("cases-link.jsonl")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    _refused(_zip_of(folder, tmp_path / "b.zip", [(link, "/etc/passwd")]), "is a symbolic link")


def test_a_symbolic_link_in_a_bundle_folder_is_refused(db, folder, tmp_path):
    (tmp_path / "elsewhere.jsonl").write_text((folder / "responses.jsonl").read_text())
    (folder / "responses.jsonl").unlink()
    (folder / "responses.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    _refused(folder, "responses.jsonl: is a symbolic link")


def test_a_zip_bomb_is_refused_before_it_is_read(db, folder, tmp_path):
    bomb = zipfile.ZipInfo("padding.jsonl")
    bomb.compress_type = zipfile.ZIP_DEFLATED
    _refused(_zip_of(folder, tmp_path / "b.zip", [(bomb, b"\0" * (64 * 1024 * 1024))]), "expands .* times .*zip bomb")


def test_too_much_data_in_all_is_refused(db, folder, tmp_path, settings):
    settings.EVALSITE_BUNDLE_MAX_BYTES = 2000
    _refused(_zip_of(folder, tmp_path / "b.zip"), "add up to more than")


def test_a_gigantic_line_is_refused_with_its_line_number(db, folder, tmp_path, settings):
    settings.EVALSITE_BUNDLE_MAX_LINE_BYTES = 1024 * 1024
    with open(folder / "cases.jsonl", "ab") as out:
        out.write(b'{"case_id": "' + b"x" * (2 * 1024 * 1024) + b'"}\n')
    _refused(folder, r"cases.jsonl line 3: line longer than 1 MiB")


def test_a_flood_of_blank_lines_is_refused(db, folder, tmp_path, settings):
    settings.EVALSITE_BUNDLE_MAX_BLANK_LINES = 100
    with open(folder / "responses.jsonl", "ab") as out:
        out.write(b"\n" * 500)
    _refused(folder, "more than 100 blank lines")


def test_a_huge_project_json_is_refused_unread(db, folder, tmp_path):
    (folder / "project.json").write_bytes(b" " * (17 * 1024 * 1024))
    _refused(folder, "project.json: is larger than 16 MiB")


@pytest.mark.parametrize("name", ["project.json", "cases.jsonl"])
def test_json_nested_too_deeply_is_a_clear_error(db, folder, name):
    deep = "[" * 100_000 + "]" * 100_000
    if name == "project.json":
        (folder / name).write_text(deep)
    else:
        (folder / name).write_text('{"case_id": "deep", "metadata": {"x": ' + deep + "}}\n")
    _refused(folder, rf"{name}.*malformed JSON")


@pytest.mark.parametrize(("where", "field", "value", "message"), [
    ("labels", "annotator", "u" * 300, "annotator"),
    ("responses", "model", "m" * 300, "model"),
    ("responses", "response_id", "r" * 300, "response_id"),
    ("cases", "case_id", "c" * 300, "case_id"),
    ("project", "overlap", 10**9, "overlap"),
    ("project", "cohorts", [{"name": "g" * 101}], "cohorts"),
    ("project", "judges", [{"name": "j" * 101}], "judges"),
    ("project", "rubric", [{"criterion_id": "k" * 201, "text": "t"}], "criterion_id"),
    ("project", "coverage_k", -1, "coverage_k"),
])
def test_values_the_database_would_refuse_are_refused_by_name(db, tmp_path, where, field, value, message):
    """The same error on SQLite (which would store them) and PostgreSQL (which would raise a DataError)."""
    parts = bundle_parts()
    if where == "project":
        parts["project"][field] = value
    else:
        parts[where][0][field] = value
    _refused(write_bundle(tmp_path / "b", parts), message)


def _peak_rss_mb_of_import(path: Path, database: Path) -> tuple[float, str]:
    """Run ``import_bundle`` in a process of its own on a migrated SQLite file; its peak RSS in MB
    and the last line it wrote on stderr."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DJANGO_SETTINGS_MODULE": "evalsite.settings.test"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    code = ("import resource, subprocess, sys; "
            "p = subprocess.run([sys.executable, 'manage.py', 'import_bundle', sys.argv[1]], capture_output=True, text=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); print(p.stderr.strip().splitlines()[-1])")
    result = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    lines = result.stdout.strip().splitlines()
    return float(lines[0]), lines[1]


def test_the_importer_stays_small_on_a_one_line_gigabyte(db, tmp_path):
    """A 1 GiB one-line cases.jsonl (stored, not compressed, so no ratio applies): refused at its
    first line; the importer process's peak RSS stays under 500 MB."""
    folder = write_bundle(tmp_path / "bundle")
    target = tmp_path / "big.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for path in sorted(folder.iterdir()):
            if path.name != "cases.jsonl":
                archive.write(path, path.name)
        with archive.open("cases.jsonl", "w", force_zip64=True) as out:
            chunk = b"x" * (16 * 1024 * 1024)
            out.write(b'{"case_id": "')
            for _ in range(64):  # 1 GiB
                out.write(chunk)
    peak, error = _peak_rss_mb_of_import(target, tmp_path / "db.sqlite3")
    assert "line longer than" in error, error
    assert peak < 500, f"peak RSS {peak:.0f} MB"
