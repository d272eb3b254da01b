"""Rules for ``scipy.stats``; importing registers them.

``import rules`` does not import this package: scipy.stats is slow to import, so the registry
loads these rules the first time a lookup misses while ``scipy.stats`` is in use.
"""

from rules.stats import multivariate, multivariate_cdf, univariate

__all__ = ["multivariate", "multivariate_cdf", "univariate"]
