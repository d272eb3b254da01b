"""The one place where Numba decorator options are chosen; kernels import ``jit`` from here.

* ``cache=True``: compiled machine code is written next to the source (``__pycache__``) and
  reloaded by later processes, so only the first process pays the compile time.
* ``nogil=True``: kernels touch no Python objects, so other threads may run meanwhile.
* ``error_model="numpy"``: division by zero gives ``inf``/``nan`` as in NumPy instead of raising,
  so NaN in gives NaN out.
* no ``fastmath``: it lets LLVM assume no NaN, which turns ``np.isnan(nan)`` into ``False``.
* no ``parallel``: these machines have two cores and parallel compilation is slow; a kernel may
  opt in only with a benchmark that shows a gain.
"""

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy")

#: For tiny leaf helpers called inside kernel loops (``kernels._spectral``): numba inlines them
#: into the caller before type inference, so a matrix order that is a compile-time constant in the
#: caller also fixes the helper's loop bounds and LLVM unrolls them. Measured on 10000 x (4x4)
#: eigh pullbacks: 0.48 ms inlined against 0.75 ms as separate functions.
jit_inline = functools.partial(jit, inline="always")
