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
