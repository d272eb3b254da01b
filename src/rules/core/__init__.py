"""The machinery every rule set is written with; it registers no rules of its own.

* :mod:`rules.core.registry`: the ``rrule``/``frule`` tables, the symbolic-zero short-circuit and
  the fitting of cotangents to a call's positional options.
* :mod:`rules.core.definition`: ``scalar_rule`` and ``non_differentiable``, rules declared as data.
* :mod:`rules.core.options`: numpy-style signatures (options after the array arguments).
* :mod:`rules.core.cotangents`: cotangents that a pullback needs as plain ndarrays.
* :mod:`rules.core.dispatch`: the one dispatch helper (algebra, array-formula or kernel path),
  the kernel path's single gate, and the reading of the crossover table ``kernels.crossovers``.
* :mod:`rules.core.broadcasting`: undoing numpy broadcasting in a cotangent.
* :mod:`rules.core.linear_frules`: the frule of a function linear in its first argument.
"""
