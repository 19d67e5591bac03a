"""Bundle interchange (SPEC §4): reading, validating and importing a bundle, and exporting a
project with its gold set and manifest.

Public names: ``bundle_import``, ``gold_export``, ``BundleError``, ``ImportResult``.
"""
from .errors import BundleError as BundleError
from .exporter import gold_export as gold_export
from .exporter import gold_export_zip as gold_export_zip
from .importer import ImportResult as ImportResult
from .importer import bundle_import as bundle_import
from .reader import BundleReader as BundleReader
