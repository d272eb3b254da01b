"""The library's rules as PyTorch operations: :func:`wrap`, and :mod:`.linalg` ready to use.

Importing this module imports torch.
"""

from rules.interop.torch import linalg
from rules.interop.torch.function import wrap

__all__ = ["linalg", "wrap"]
