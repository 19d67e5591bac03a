"""Judge backends (issue 23): ``base`` holds the interface (``JudgeBackend``) and the registry;
each other module declares one backend: ``chat`` (OpenAI-compatible chat completions, and its
HTTP client ``ChatBackend``), ``baseline``, ``panel``, ``calibrated``, ``replay``. A new backend
is one more module here; the registry imports the package's modules on first use.

The registry's names are re-exported here; the chat client's names are re-exported lazily, so
importing the registry (the models module does, for the field's choices) loads no HTTP client.
"""
from importlib import import_module

from .base import (
    Badge,
    JudgeBackend,
    RunContext,
    backend_choices,
    backend_for,
    backend_get,
    backend_names,
    backends,
    judge_is_derived,
    judge_is_panel,
    judge_settings,
    register,
    unregister,
)

_LAZY = {name: "chat" for name in ("CallFailed", "ChatBackend", "ChatConfig", "Completion", "cache_key",
                                   "completion_from_body", "retry_after_seconds")}

__all__ = [
    "Badge", "JudgeBackend", "RunContext", "backend_choices", "backend_for", "backend_get", "backend_names", "backends",
    "judge_is_derived", "judge_is_panel", "judge_settings", "register", "unregister", *_LAZY,
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
