"""Automated judges (SPEC §7): prompts and parsing (pure), the OpenAI-compatible and offline
baseline backends, the run executor, configuration services, and the judge pages.

Modules: ``prompts`` (templates, aliases, few-shot block, option order), ``parsing`` (strict
output parsing, evidence check), ``baseline`` (offline lexical judge), ``backends`` (the judge
backend interface and registry, one module per backend; ``backends.chat`` holds the Chat
Completions client with retries), ``settings`` (``Judge.settings`` keys), ``calls`` (the call
types), ``plan`` (calls of a run), ``runner`` (executes a run), ``dispatch`` (queues a run by
the task's name), ``services`` / ``selectors`` (writes / reads),
``forms``, ``views``, ``urls``. The public names below are re-exported lazily, so importing a
pure module (``prompts``, ``parsing``) does not load Django models.
"""
from importlib import import_module

_EXPORTS = {
    "judge_run_execute": "runner",
    "RunSummary": "runner",
    "judge_validate": "services",
    "judge_save": "services",
    "judge_panel_create": "services",
    "judge_cross_evaluation_create": "services",
    "judge_baseline_run": "services",
    "prompt_template_save": "services",
    "judge_run_create": "services",
    "judge_run_start": "services",
    "judge_run_stop": "services",
    "judge_run_resume": "services",
    "side_by_side": "selectors",
    "judge_settings_parse": "settings",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
