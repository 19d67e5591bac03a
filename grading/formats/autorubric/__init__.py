"""Autorubric datasets (issue 24 point 3): the JSON file Autorubric's ``RubricDataset.to_file``
writes (GitHub ``delip/autorubric``), imported as a project whose reference labels are the dataset's
ground truth. ``reading`` recognizes and converts a file; ``located`` reads JSON keeping the line
where each item starts.

A dataset is one JSON object: ``rubric`` (a list of criteria, possibly in sections, or
``{"guidelines", "criteria"}``; null when every item has its own), ``items``, and optionally ``name``,
``prompt`` and ``reference_submission``. An item has ``submission``, ``description`` and
``ground_truth`` (one entry per criterion, or null), and optionally its own ``rubric``, ``prompt`` and
``reference_submission``. Other keys (a criterion's ``aggregation``, say) are left alone.

- The project: ``--project`` (or the project whose page the file is uploaded on); otherwise the slug
  of the dataset's ``name`` (a dataset without a name needs ``--project``). NAME below is that slug of
  the dataset's name, or the project's slug when it has none. A new project is named after the
  dataset, described by its ``prompt``, and the rubric's guidelines are its guidelines; an existing
  project keeps its settings unless ``--update-settings`` asks for the file's.
- A criterion: id ``name`` (``C1``, ``C2``, ... when unnamed, numbered as Autorubric numbers them,
  sections flattened), text ``requirement``, weight ``weight`` (10 when absent, Autorubric's
  default). Without ``options`` it is binary; with them ``scale_type`` (ordinal when absent), with
  the options' labels, values and ``na`` flags as given. Each is tagged NAME. An item's own rubric
  gives case-specific criteria ``CASE#NAME`` (its guidelines go into the case's metadata).
- An item: one case ``PREFIX-001``, ``PREFIX-002``, ... (PREFIX is NAME; metadata ``source`` NAME
  and ``item_index``) with one response ``CASE-assistant`` of the model ``NAME-assistant``. A
  ``submission`` that is a JSON-encoded chat (a list of messages with ``role`` and ``content``)
  ending with the assistant's turn: the turns before it are the case's messages, that turn is the
  response. Any other submission is the response's text as it is, and the case's prompt is the
  item's ``prompt`` or else the dataset's. The item's or else the dataset's ``reference_submission``
  is the case's reference answer.
- ``ground_truth``: final labels of the cohort ``ground-truth`` by the annotator ``NAME-reference``:
  the option (its label matched as Autorubric matches it, ignoring case and surrounding spaces) or,
  for a binary criterion, ``MET`` / ``UNMET`` / ``CANNOT_ASSESS`` (also ``N/A``, ``NA``; any case) as
  met / not met / cannot assess. A null entry is no label; an N/A option is an ordinary option whose
  ``na`` flag says what it means. The item's ``description`` (why its author thinks the answer good or
  bad) is the rationale of the item's first label, so it never shows beside the case.

``--mapping FILE`` changes the names and sets project settings: ``{"cohort", "annotator", "model",
"case_prefix", "project": {"name", "description", "blind", "coverage_k", ...}}``;
``demo/charm100_mapping.json`` is the one the CHARM-100 demo project is loaded with.

The dataset is converted into an evalsite bundle and imported by ``grading.bundles.bundle_import``
(``healthbench.converted_import``): all or nothing, and every error names the file, the line where
the item (or the criterion) at fault starts, or the line of a JSON syntax error, the item and the field.
"""
from ..registry import DataFormat, register
from .reading import detect as detect
from .reading import read as read

register(DataFormat(
    name="autorubric",
    title="Autorubric dataset",
    upload_help="an Autorubric dataset (.json: a RubricDataset, its rubric and items with their ground truth; a new "
                "project is named after the dataset)",
    suffixes=(".json",),
    detect=detect,
    read=read,
    options=("mapping",),
))
