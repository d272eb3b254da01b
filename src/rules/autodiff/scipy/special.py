"""``scipy.special``, traceable (see :mod:`rules.autodiff.scipy`)."""

from rules.autodiff.scipy.mirror import mirror

__getattr__, __dir__ = mirror("scipy.special")
