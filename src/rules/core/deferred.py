"""Rules that load late: deferred rule modules, and calls lifted to another library's arrays.

:func:`defer` keeps an expensive library's rule module out of ``import rules`` until that library
is in use; :func:`lift_foreign` hands a call with another library's array (dask) to a module that
knows that library. The registry (:mod:`rules.core.registry`) asks :func:`load_deferred` when a
lookup misses and :func:`foreign_module` at each call, each behind a test of its table
(``DEFERRED``, ``FOREIGN``) so that neither costs a function call while the table is empty.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = [
    "DEFERRED",
    "FOREIGN",
    "defer",
    "foreign_module",
    "is_foreign_array",
    "lift_foreign",
    "load_deferred",
]

DEFERRED: dict[str, str] = {}


def defer(rule_module: str, trigger: str) -> None:
    """Import the rule module ``rule_module`` only once the module ``trigger`` is in use.

    Rules for an expensive library (``scipy.special`` takes half a second to import) need not
    slow down ``import rules``: a user who calls ``rrule(scipy.special.expit, x)`` has imported
    ``scipy.special``, so the first lookup that misses imports the deferred rule modules whose
    trigger is in ``sys.modules`` and looks again.
    """
    DEFERRED[rule_module] = trigger


FOREIGN: dict[str, tuple[str, str]] = {}


def lift_foreign(trigger: str, array_type: str, module: str) -> None:
    """Hand calls with an argument of another library's array type to the module ``module``.

    Once the module ``trigger`` is imported, a call of ``rrule`` or ``frule`` one of whose
    positional arguments is an instance of ``trigger.array_type`` (``dask.array.Array``) goes
    to ``module.lifted_rrule(f, args, kwargs)`` or ``module.lifted_frule(tangents, f, args,
    kwargs)`` instead of the rule itself, which only takes in-memory arrays. The module is
    imported on first use, so ``import rules`` imports neither it nor the other library.
    """
    FOREIGN[trigger] = (array_type, module)


def is_foreign_array(x: Any) -> bool:
    """Whether ``x`` is an array of a library registered with :func:`lift_foreign` (dask)."""
    return foreign_module((x,)) is not None if FOREIGN else False


def foreign_module(args: tuple[Any, ...]) -> Any:
    """The lifting module for ``args``, when one is another library's array; else ``None``."""
    for trigger, (array_type, module) in FOREIGN.items():
        library = sys.modules.get(trigger)
        if library is not None:
            cls = getattr(library, array_type)
            if any(isinstance(a, cls) for a in args):
                return importlib.import_module(module)
    return None


def load_deferred() -> bool:
    """Import the deferred rule modules whose trigger has been imported; whether any was."""
    ready = [module for module, trigger in DEFERRED.items() if trigger in sys.modules]
    for module in ready:
        # A deferred module registering rules loads the other ready ones itself (register
        # calls this function): each is imported once, by whichever call pops it first.
        if DEFERRED.pop(module, None) is not None:
            importlib.import_module(module)
    return bool(ready)
