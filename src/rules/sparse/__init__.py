"""Rules for scipy.sparse and scipy.sparse.linalg.

:mod:`rules.sparse.products` (sparse times dense, reached through ``@``) loads with ``import
rules``: scipy.sparse is imported by the machinery already. :mod:`rules.sparse.linalg`
(``spsolve``, ``splu(...).solve``, ``expm_multiply``) is deferred until ``scipy.sparse.linalg``
is in use.
"""

from rules.sparse import pattern, products

__all__ = ["pattern", "products"]
