"""Label Studio (issue 24 point 2): a Label Studio JSON export (a list of tasks with their
annotations) read into a project, and any project written out as Label Studio tasks with a
generated labeling config, importable by Label Studio 1.x.

Import converts the tasks into an evalsite bundle in a temporary directory and hands it to
``grading.bundles.bundle_import``, so the bundle's checks, label history and all-or-nothing hold;
an error the importer finds in the converted bundle is named back by the Label Studio file, the
task (``line``: its 1-based place in the list) and the task's field. Criteria come from the
labeling config's controls when one is given (``config`` in the mapping file, or ``config.xml``
next to the export), else from the results themselves; each ``Choices`` or ``Rating`` control is a
criterion whose id is the control's name. Choices whose words are all verdict words (met / not
met / cannot assess, yes / no, true / false, pass / fail) make a binary criterion; any other
Choices an ordinal one, its options in the config's order, valued by the ``hint="value 0.5"``
this module writes or else 0, 1, 2, ...; a Rating an ordinal criterion with options 1..maxRating.

Defaults (a mapping file, ``--mapping``, changes them): the prompt is ``data.prompt``, the response
``data.response``, the model ``data.model`` (``unknown`` when absent), the response id
``data.response_id`` or else the task's id, the case id ``data.case_id`` or else the id of the
first task with the same prompt; the mapping file may also name the labeling config (``config``,
a path relative to it). Each annotation's ``completed_by`` is an annotator of the cohort
``labelstudio`` (``labelstudio-<id>``, whether Label Studio gives the user as an id or as an object;
an object's e-mail when it has no id), a ``ground_truth`` annotation is that cohort's checker label
(one per task), ``lead_time`` the time spent on the annotation's first label; drafts, cancelled
annotations and results of other controls (text areas, ...) are left out and counted. Each
prediction is a judge's judgments: the judge named by its ``model_version`` (``labelstudio-predictions``
without one; made as a replay judge when new), its sample the ``evalsite_sample`` evalsite writes or
else its place among the task's predictions of that model version.

Export writes ``tasks.json`` (data ``prompt``, ``response``, ``model``, ``case_id``; one
annotation per annotator and role, ``completed_by`` a stable integer per user name with the name in
``evalsite_username``, which Label Studio ignores; one prediction per judge and sample,
``model_version`` = the judge's name, a Choices result per criterion it decided; judgments without a
choice to show — invalid outputs, bare values — are left out and counted) and ``config.xml`` (a
Choices control per criterion). Label Studio → evalsite → Label Studio gives the same tasks
(annotations and predictions) for Choices controls whose binary words are Met / Not met / Cannot
assess; a Rating comes back as Choices, a nominal criterion as ordinal, case-specific criteria as
controls of the one config.
"""
from ..registry import DataFormat, register
from .controls import Control as Control
from .controls import config_controls as config_controls
from .controls import config_xml as config_xml
from .reading import detect as detect
from .reading import read as read
from .writing import write as write

register(DataFormat(
    name="labelstudio",
    title="Label Studio export",
    upload_help="a Label Studio JSON export (.json: a list of tasks with their annotations)",
    suffixes=(".json",),
    detect=detect,
    read=read,
    write=write,
    options=("mapping",),
))
