"""CHARM-100, the Autorubric project's example dataset, as the demo project ``charm-100``.

100 synthetic single-turn chatbot conversations graded on six project-wide criteria of mixed
kinds (ordinal, nominal, binary, one ordinal criterion with a not-applicable option), with
reference labels. The vendored copy lives in ``demo/vendor/charm100/`` with its NOTICE and MIT
licence (Copyright (c) 2025 Delip Rao). It is an Autorubric dataset, so the app's Autorubric
importer (``grading.formats.autorubric``, whose docstring gives every mapping rule) loads it;
``charm100_mapping.json`` keeps the demo's names (project ``CHARM-100``, cases ``charm-001``, ...,
the annotator ``charm100-reference`` of the cohort ``ground-truth``) and settings (not blind,
``coverage_k`` 1: there is one binary criterion). From the command line, the same is::

    manage.py import_bundle demo/vendor/charm100/charm100.json --mapping demo/charm100_mapping.json
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDORED_SOURCE = HERE / "vendor" / "charm100" / "charm100.json"
MAPPING = HERE / "charm100_mapping.json"


def charm100_import(*, source: str | Path = VENDORED_SOURCE, user=None) -> dict:
    """Import CHARM-100 (``source``: the vendored file, or a copy of it) with the app's Autorubric
    importer and the demo's mapping; returns the import's counts."""
    # lazy: the rest of demo/ is plain Python, importable without Django
    from grading.formats.registry import ImportRequest, format_import

    return format_import(ImportRequest(path=Path(source), user=user, files={"mapping": MAPPING}), name="autorubric")
