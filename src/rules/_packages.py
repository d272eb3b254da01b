"""Check that ``tangents`` and ``kernels`` are this project's packages, not namesakes.

The import names ``kernels`` (Hugging Face's ``kernels`` on PyPI) and ``rules`` (``rules``, the
Django permissions package) are taken by other distributions; an environment with one of them
installed may resolve ``import kernels`` to it. ``rules`` imports both of this project's other
packages, so it checks them once, first thing, and fails with a message that names the foreign
package instead of an ``AttributeError`` deep inside a rule. Each package marks itself with
``__tangent_algebra__ = True`` in its ``__init__``.
"""

from __future__ import annotations

import importlib

__all__ = ["require_project_package"]


def require_project_package(name: str) -> None:
    """Import ``name`` and raise ``ImportError`` unless it is tangent-algebra's own package."""
    module = importlib.import_module(name)
    if getattr(module, "__tangent_algebra__", False) is not True:
        where = getattr(module, "__file__", None) or "an unknown location"
        raise ImportError(
            f"rules needs tangent-algebra's own {name!r} package, but 'import {name}' found a "
            f"different package of that name at {where} (PyPI's django-rules and Hugging "
            f"Face's kernels use the import names 'rules' and 'kernels'). Uninstall it, or use "
            "a separate environment for tangent-algebra"
        )


require_project_package("tangents")
require_project_package("kernels")
