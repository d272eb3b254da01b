"""The one place where Numba decorator options are chosen; kernels import ``jit`` from here.

* ``cache=True``: compiled machine code is written next to the source (``__pycache__``) and
  reloaded by later processes, so only the first process pays the compile time.
* ``nogil=True``: kernels touch no Python objects, so other threads may run meanwhile.
* ``error_model="numpy"``: division by zero gives ``inf``/``nan`` as in NumPy instead of raising,
  so NaN in gives NaN out.
* no ``fastmath``: it lets LLVM assume no NaN, which turns ``np.isnan(nan)`` into ``False``.
* no ``parallel``: these machines have two cores and parallel compilation is slow; a kernel may
  opt in only with a benchmark that shows a gain.

``jit_inline`` adds ``inline="always"`` (Numba-level inlining) for small helpers that a kernel
calls with compile-time-constant sizes from a specialised branch (``if n == 4: helper(..., 4)``).
Only after inlining does LLVM see the constant loop bounds and unroll the loops; without it the
constants do not reach the helper (it matters on ``10000x4`` stacks: bench cases
``matmul.pullback`` and ``cholesky.pullback``). Every call site gets its own copy, so keep the
call sites few.
"""

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy")
jit_inline = functools.partial(
    numba.njit, cache=True, nogil=True, error_model="numpy", inline="always"
)
