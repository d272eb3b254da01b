"""Rules for ``numpy.fft``: the transforms, their shifts and sample frequencies; importing registers them."""

from rules.fft import shifts, transforms

__all__ = ["shifts", "transforms"]
