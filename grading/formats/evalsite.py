"""evalsite's own bundle (SPEC §4): a folder, or a .zip of it, holding project.json and the
.jsonl files; read by ``grading.bundles.bundle_import``, written by ``grading.bundles.gold_export``
(the bundle, gold files and manifest). Any .zip is taken for a bundle, so a zip that is not one is
told what it lacks ("no project.json in the zip") rather than that no format reads it; an Office
document (a zip with ``[Content_Types].xml``, such as an .xlsx workbook) is not taken for one."""
import zipfile
from pathlib import Path

from .registry import DataFormat, ImportRequest, register


def _detect(path: Path) -> bool:
    if path.is_dir():
        return (path / "project.json").is_file()
    if not (path.is_file() and zipfile.is_zipfile(path)):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return True  # a broken zip: the bundle reader says what is wrong with it
    return "[Content_Types].xml" not in names or any(n.endswith("project.json") for n in names)


def _project_of(path: Path) -> str | None:
    from grading.bundles import BundleReader  # lazy: the bundle code brings pandas: loaded when a bundle is read

    with BundleReader(path) as reader:
        data = reader.read_json("project.json")
    return data.get("slug") if isinstance(data, dict) else None


def _read(request: ImportRequest) -> dict:
    from grading.bundles import bundle_import  # lazy: the bundle code brings pandas: loaded when a bundle is read

    return bundle_import(path=request.path, user=request.user, update_settings=request.update_settings).as_dict()


def _write(*, project, out_dir: Path) -> dict:
    from grading.bundles import gold_export  # lazy: the bundle code brings pandas: loaded when a bundle is written

    result = gold_export(project=project, out_dir=out_dir)
    return {"files": result["files"], "counts": result["counts"]}


register(DataFormat(
    name="evalsite",
    title="evalsite bundle",
    upload_help="the bundle as a .zip of its folder (project.json and the .jsonl files)",
    suffixes=(".zip",),
    detect=_detect,
    read=_read,
    project_of=_project_of,
    write=_write,
))
