"""Bundle interchange (SPEC §4): reading, validating and importing a bundle, and exporting a
project with its gold set and manifest.

Public names: ``bundle_import``, ``gold_export``, ``gold_export_zip``, ``BundleError``,
``ImportResult``, ``BundleReader``. They load on first use (PEP 562), so that importing a light
module of the package (``grading.bundles.errors``, which the format registry and the URL conf reach)
does not bring pandas and the exporter into every web process.
"""
import importlib

_SOURCES = {
    "BundleError": "errors",
    "gold_export": "exporter",
    "gold_export_zip": "exporter",
    "ImportResult": "importer",
    "bundle_import": "importer",
    "BundleReader": "reader",
}
__all__ = sorted(_SOURCES)


def __getattr__(name: str):
    if name in _SOURCES:
        value = getattr(importlib.import_module(f".{_SOURCES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))
