"""Rules for ``scipy.signal``; importing registers them.

``import rules`` does not import this package: scipy.signal is slow to import, so the registry
loads these rules the first time a lookup misses while ``scipy.signal`` is in use.
"""

from rules.signal import convolution, filtering

__all__ = ["convolution", "filtering"]
