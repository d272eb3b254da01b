"""Rules for ``scipy.special``; importing registers them.

``import rules`` does not import this package: scipy.special is slow to import, so the registry
loads these rules the first time a lookup misses while ``scipy.special`` is in use.
"""

from rules.special import bessel, functions, gamma, information, normal

__all__ = ["bessel", "functions", "gamma", "information", "normal"]
