"""The judge backend interface and its registry (issue 23, point 2).

A backend is what ``Judge.backend`` names: the OpenAI-compatible chat judge, the offline
baseline, a panel, another judge's calibrated scores, imported (replayed) judgments. Each one is
a ``JudgeBackend`` subclass declared once, in its own module of this package, with
``@register``; the registry finds the package's modules by itself on first use (as Django's admin
autodiscovers ``admin.py``), so adding a backend is one module. Everything else (the runner,
services, forms, selectors, the API, the importer, the rate limiter, the pages) asks the
registry for the judge's backend and reads its capabilities and methods; nothing outside this
package compares a backend by its stored name.

What a backend declares: its stored ``name`` and ``label``; its capabilities (``calls_out``,
``executes_calls``, ``votes_over_members``, ``derived``, ``decides_own_criteria``, ``page_form``, ``configurable``); its
typed settings (``settings_parse``) with their form fields and validation; how a run plans
(``compiled``) and executes its calls (``execute``), how an answer is parsed (``parse``), what a
call costs (``cost``) and which provider limits apply (``limits``); and how pages show it
(``badge``, ``subtitle``, ``summary``, ``column_kind``).

The models module does not import the registry (``grading.models`` stays below
``grading.judges``): ``Judge.backend`` is a plain column, and a name is parsed into its backend
at the edge (the judge forms, the API serializer, the importer) with ``backend_choices`` /
``backend_get``. This module imports no other backend module and loads no pandas.
"""
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

from evalsite.discovery import PackageModules

from ...models import JUDGE_BACKENDS, Judge
from ..settings import JudgeSettings, judge_settings_parse, settings_schema

if TYPE_CHECKING:  # for annotations only
    from django import forms

    from ..calls import Call
    from ..parsing import Outcome

NAME_MAX_LENGTH = Judge._meta.get_field("backend").max_length
MTOK = Decimal(1_000_000)
COST_QUANTUM = Decimal("0.00000001")


@dataclass(frozen=True)
class Badge:
    """How the judge lists show a judge's kind: ``text``, a CSS class, a tooltip, and whether the
    runs table repeats it beside the judge's name."""

    text: str
    css: str = ""
    title: str = ""
    in_runs: bool = False


class RunContext(Protocol):
    """What the runner hands a backend's ``execute``: the run, its judge and typed settings, and
    the ways to write answers. ``record`` and ``flush_maybe`` are the one write path of a run's
    judgments (idempotent on the ``judgment_unique_call`` key, counted, budgeted)."""

    run: object
    judge: Judge
    settings: JudgeSettings
    sleep: object

    @property
    def stopping(self) -> bool: ...

    def record(self, call: "Call", outcome: "Outcome", **extra) -> None:
        """Write the judgment of one call (``extra``: raw text, latency_ms, tokens, cost...)."""

    def flush_maybe(self) -> None:
        """Write what is buffered when the batch is full or old enough."""

    def answer_concurrently(self, calls: Iterable, *, client, messages, params: dict, concurrency: int) -> None:
        """Answer ``calls`` through ``client.complete(messages(call))`` on ``concurrency`` threads,
        serving repeated requests from the persistent cache and keeping to the run's budget;
        each answer is parsed by the backend's ``parse`` and written."""


class JudgeBackend:
    """One kind of judge. Subclasses set the class attributes and override what they do."""

    name: str = ""  # the value stored in ``Judge.backend`` and in bundles; never changes
    label: str = ""  # for choices
    position: int = 50  # where the backend comes in choices and lists (then by name)
    calls_out: bool = False  # sends requests to a model endpoint: the allowlists, the key and the rate limits apply
    needs_model: bool = False  # a model name is required
    executes_calls: bool = False  # a run plans calls and ``execute`` answers them (else it takes stock of stored judgments)
    votes_over_members: bool = False  # decides by a vote over member judges' decisions (a panel): never run
    derived: bool = False  # made from other judges' judgments: not itself calibrated, not started from the run form
    # decides only the criteria it has judgments on (a calibration fitted for one criterion or trait): a criterion
    # without one is not decided, so it is neither a missing output nor compared (``selectors.decisions``)
    decides_own_criteria: bool = False
    page_form: bool = False  # created and edited with the judges page's judge form
    configurable: bool = False  # created and changed through the API (else its judges are data)
    column_kind: str = "judge"  # the side-by-side column's kind: judge | baseline | panel

    # -- settings --------------------------------------------------------------------------------
    # The keys of ``Judge.settings`` the API takes for this backend (``settings.KEY_SCHEMAS``).
    settings_keys: tuple[str, ...] = ()

    def settings_schema(self) -> dict:
        """The JSON Schema of this backend's settings as the API states and checks them."""
        return settings_schema(self.settings_keys)

    def settings_parse(self, data: dict | None) -> JudgeSettings:
        """The typed settings of a judge of this backend; raises ``SettingsError`` naming the key."""
        return judge_settings_parse(data)

    def settings_fields(self) -> "dict[str, forms.Field]":
        """Form fields for this backend's settings (new instances on each call), by form field name."""
        return {}

    def settings_initial(self, settings: JudgeSettings) -> dict:
        """The form fields' initial values for a judge's current settings."""
        return {}

    def settings_write(self, data: dict, settings: dict) -> None:
        """Put the cleaned form values ``data`` of this backend's fields into the raw ``settings``
        JSON (in place); a form error is raised as ``django.core.exceptions.ValidationError``."""

    def validate(self, *, judge: Judge, settings: JudgeSettings) -> dict[str, str]:
        """Problems of a judge's configuration beyond its settings' syntax, as {field: message}."""
        if self.needs_model and not judge.model:
            return {"model": f"a judge of {self.label} needs a model name"}
        if settings.members:
            return {"settings": "settings.members: only a panel has members"}
        return {}

    # -- runs ------------------------------------------------------------------------------------
    def compiled(self, settings: JudgeSettings) -> bool:
        """Whether a run plans one call per trait checklist (RULERS compiled mode) instead of per criterion."""
        return False

    def execute(self, *, context: RunContext, calls: Iterable) -> None:
        """Answer the pending ``calls`` of a run, writing each through ``context``."""
        raise NotImplementedError(f"a {self.name} judge's runs make no calls")

    def parse(self, call, text: str) -> list:
        """The (criterion call, outcome) pairs one answer text makes."""
        from ..parsing import output_parse  # lazy: parsing loads the decision rules, not needed to list backends

        return [(call, output_parse(text=text, kind=call.item.kind, options=call.item.options))]

    def cost(self, *, judge: Judge, tokens_in: int, tokens_out: int) -> Decimal:
        """US dollars of one call, from the judge's prices per million tokens."""
        cost = (Decimal(tokens_in) * Decimal(judge.price_in_per_mtok) / MTOK
                + Decimal(tokens_out) * Decimal(judge.price_out_per_mtok) / MTOK)
        return cost.quantize(COST_QUANTUM)

    def limits(self, *, judge: Judge) -> dict:
        """The provider limits a run of this judge keeps to (recorded in the run's configuration); {} for none."""
        return {}

    # -- pages -----------------------------------------------------------------------------------
    def badge(self, judge: Judge) -> Badge:
        return Badge("LLM")

    def subtitle(self, judge: Judge) -> str:
        """The side-by-side column's subtitle."""
        return f"{judge.model or judge.backend} · {judge.condition}"

    def summary(self, judge: Judge) -> str:
        """The line after a judge's name in the judge lists."""
        parts = [judge.model] if judge.model else []
        parts.append(judge.condition)
        if judge.samples > 1:
            parts.append(f"{judge.samples} samples at T={judge.temperature}")
        return " · ".join(parts)

    def __repr__(self) -> str:
        return f"<judge backend {self.name}>"


_REGISTRY: dict[str, JudgeBackend] = JUDGE_BACKENDS  # kept beside the model: see ``Judge.kind``
_FLAGS = ("calls_out", "needs_model", "executes_calls", "votes_over_members", "derived", "decides_own_criteria", "page_form",
          "configurable")


# Each module of this package declares its backend; ``register`` asks for them all first.
_discover = PackageModules(__name__.rpartition(".")[0], skip={"base"}).import_all


def register(cls: type[JudgeBackend]) -> type[JudgeBackend]:
    """Class decorator: declare a backend. A wrong declaration fails here, not at run time."""
    _discover()
    backend = cls()
    name = backend.name
    if not isinstance(name, str) or not name or len(name) > NAME_MAX_LENGTH or name != name.strip().lower():
        raise TypeError(f"{cls.__name__}.name must be a lower-case name of 1 to {NAME_MAX_LENGTH} characters, not {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"a judge backend {name!r} is registered already ({_REGISTRY[name].__class__.__name__})")
    if not backend.label:
        raise TypeError(f"{cls.__name__} needs a label")
    bad = [flag for flag in _FLAGS if not isinstance(getattr(backend, flag), bool)]
    if bad:
        raise TypeError(f"{cls.__name__}.{bad[0]} must be True or False")
    if backend.executes_calls and cls.execute is JudgeBackend.execute:
        raise TypeError(f"{cls.__name__} executes calls but does not define execute()")
    if backend.votes_over_members and backend.executes_calls:
        raise TypeError(f"{cls.__name__}: a backend that votes over members is never run")
    if backend.page_form and not backend.configurable:
        raise TypeError(f"{cls.__name__}: a backend on the judges page is configurable")
    _REGISTRY[name] = backend
    return cls


def unregister(name: str) -> None:
    """Remove a backend (tests that register one of their own)."""
    _REGISTRY.pop(name, None)


def backends() -> list[JudgeBackend]:
    """Every registered backend, by position and name."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda b: (b.position, b.name))


def backend_get(name: str) -> JudgeBackend:
    """The backend stored as ``name``; LookupError naming the known ones."""
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise LookupError(f"unknown judge backend {name!r} (known: {', '.join(_REGISTRY)})") from None


def backend_for(judge: Judge) -> JudgeBackend:
    """The backend of ``judge`` (as ``judge.kind``, after discovery)."""
    return backend_get(judge.backend)


def backend_choices() -> list[tuple[str, str]]:
    """(name, label) of every backend: the choices of ``Judge.backend``."""
    return [(b.name, b.label) for b in backends()]


def backend_names(**flags: bool) -> list[str]:
    """Names of the backends whose capabilities match ``flags`` (e.g. ``votes_over_members=True``),
    for queryset filters: ``Judge.objects.exclude(backend__in=backend_names(votes_over_members=True))``."""
    unknown = sorted(set(flags) - set(_FLAGS))
    if unknown:
        raise TypeError(f"unknown capability {unknown[0]!r} (known: {', '.join(_FLAGS)})")
    return [b.name for b in backends() if all(getattr(b, k) == v for k, v in flags.items())]


def judge_settings(judge: Judge) -> JudgeSettings:
    """A judge's settings, typed by its backend; raises ``SettingsError`` naming the offending key."""
    return backend_for(judge).settings_parse(judge.settings)


def judge_is_panel(judge: Judge) -> bool:
    """Whether the judge decides by a vote over member judges (its decisions come from theirs)."""
    return backend_for(judge).votes_over_members


def judge_is_derived(judge: Judge) -> bool:
    """Whether the judge is made from other judges' judgments (a panel, a calibration)."""
    return backend_for(judge).derived
