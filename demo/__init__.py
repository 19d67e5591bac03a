"""Demo and benchmark data for evalsite, as bundles in the SPEC §4 format.

Pure Python (stdlib + numpy, no Django): a deterministic synthetic clinical
study generator and a converter for the public DevAI dataset, all writing
through :mod:`demo.bundle_io`. The Django side imports the resulting
directories with ``manage.py import_bundle``. The public CHARM-100 dataset is
an Autorubric file that the app's own importer reads (:mod:`demo.charm100`
holds its path and the demo's mapping). See ``demo/README.md``.

The public names below are re-exported lazily so that ``python -m
demo.clinical`` (and the other module CLIs) do not import their own module
twice.
"""

from importlib import import_module

_EXPORTS = {
    "BundleError": "demo.bundle_io",
    "BundleWriter": "demo.bundle_io",
    "validate_bundle": "demo.bundle_io",
    "write_bundle": "demo.bundle_io",
    "zip_bundle": "demo.bundle_io",
    "generate_clinical": "demo.clinical",
    "convert_devai": "demo.devai",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'demo' has no attribute {name!r}")
