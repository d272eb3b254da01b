"""The rules over dask arrays: stacks of matrices beyond one machine's memory.

``rrule(np.linalg.cholesky, A)`` with a dask array ``A`` of shape ``(..., n, n)``, its batch axes
chunked and its last two axes in one chunk, returns a dask array ``L`` and a pullback whose
cotangents are dask arrays with ``A``'s chunks. Nothing is computed until the user computes;
then each chunk is one in-memory rule call on a numpy block, batched kernels included, on
dask's threads or on a ``dask.distributed`` cluster. ``frule`` works alike.

Lifted: the linear-algebra rules that act matrix by matrix on a stack (``np.matmul``,
``np.linalg.solve``, ``scipy.linalg.solve_triangular``, ``inv``, ``det``, ``slogdet``,
``cholesky``, ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr``, ``scipy.linalg.lu``,
``scipy.linalg.expm``) and the elementwise ufuncs; ``np.sum`` and ``np.mean`` take dask's own
reductions as their forward (:mod:`rules.dask.reductions`). Any other rule given a dask array raises a
``TypeError`` naming its function, instead of computing the array behind the user's back.

``import rules`` does not import this package nor dask: the registry loads it the first time a
rule is called with a dask array (:func:`rules.core.registry.lift_foreign`). Loading it
registers ``ProjectTo`` for dask arrays (:mod:`rules.dask.projection`), so ``rules.autodiff``'s
``grad`` of a program over dask arrays returns dask arrays, lazily.
"""

from rules.dask.blocks import MAX_CHUNK_BYTES
from rules.dask.lift import lifted_frule, lifted_rrule
from rules.dask.projection import DaskArrayProjector
from rules.dask.signatures import core_ndims, lifted_functions

__all__ = [
    "MAX_CHUNK_BYTES",
    "DaskArrayProjector",
    "core_ndims",
    "lifted_frule",
    "lifted_functions",
    "lifted_rrule",
]
