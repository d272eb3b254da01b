"""The one place where Numba decorator options are chosen; kernels import ``jit`` from here.

* on-disk cache: compiled machine code is written next to the source (``__pycache__``), or where
  Numba's locators find room (``NUMBA_CACHE_DIR``, the user's cache directory), and reloaded by
  later processes, so only the first process pays the compile time. A cache that cannot be used
  never breaks the library (below).
* ``nogil=True``: kernels touch no Python objects, so other threads may run meanwhile.
* ``error_model="numpy"``: division by zero gives ``inf``/``nan`` as in NumPy instead of raising,
  so NaN in gives NaN out.
* no ``fastmath``: it lets LLVM assume no NaN, which turns ``np.isnan(nan)`` into ``False``.
  The one flag ``jit_tiles`` kernels take is ``contract`` (below), which assumes nothing.
* no ``parallel``: these machines have two cores and parallel compilation is slow; a kernel may
  opt in only with a benchmark that shows a gain.

``jit_slp`` compiles with LLVM's SLP (straight-line) vectorizer on, for kernels written for it:
register tiles of scalar locals, such as the tiled products of :mod:`kernels.tiled_products`.
Numba turns that pass off by default (``NUMBA_SLP_VECTORIZE=0`` since Numba 0.57, after
miscompilations were reported with the LLVM of that time: numba/numba pull request 8852), and
its only switch is process-wide. ``jit_slp`` turns it on while its own kernel compiles, under
Numba's compiler lock, which every compilation in the process holds: no compilation in another
thread sees it. A function compiled for the first time *inside* that window (a callee of the
kernel, a Numba ``@overload`` it uses) is compiled with it too, and keeps that code; so
``jit_slp`` kernels call ``jit_inline`` helpers only, which become part of the kernel. Cached
code compiled with it is kept under its own index keys (:class:`_SlpCache`). The kernels
compiled so are tested against numpy like every other one.

``jit_tiles`` is ``jit_slp`` that also lets LLVM fuse a multiplication and the addition after
it into one fused multiply-add (``fastmath={"contract"}``, no other fast-math flag): one
rounding instead of two, as BLAS's own kernels do, and NaN and inf propagate as before
(``fma(inf, 0, x)`` is NaN, like ``inf * 0 + x``). It is for the register tiles, whose sums are
their kernels' whole cost: there, half of the instructions were the separate additions. Other
``jit_slp`` kernels keep two roundings, because their tests compare kernels bit for bit that
LLVM would fuse in different places.

``jit_inline`` adds ``inline="always"`` (Numba-level inlining) for small helpers that a kernel
calls with compile-time-constant sizes from a specialised branch (``if n == 4: helper(..., 4)``).
Only after inlining does LLVM see the constant loop bounds and unroll the loops; without it the
constants do not reach the helper (it matters on ``10000x4`` stacks: bench cases
``matmul.pullback`` and ``cholesky.pullback``). Every call site gets its own copy, so keep the
call sites few.

An unusable cache. Numba's own ``cache=True`` raises at import when no directory is writable
(``RuntimeError: cannot cache function ...: no locator available``, a read-only install with an
unwritable ``$HOME``), and raises ``UnpicklingError``/``EOFError`` from the first call of a kernel
whose ``.nbi``/``.nbc`` file is garbage, truncated or empty, in every new process. Here a kernel
whose cache cannot be set up, read or written compiles in memory instead (for the rest of the
process), and the first such failure per cache directory issues one :class:`KernelCacheWarning`
naming the directory and how to clear it. The wrapper is :class:`_FallbackCache`, a subclass of
Numba's ``FunctionCache`` that catches the errors of its ``load_overload`` and
``save_overload``; it is installed on the dispatcher as ``cache=True`` would install Numba's.
It also refuses a cache entry whose code was compiled for another signature than the one asked
for, which concurrent processes can leave behind (see :meth:`_FallbackCache.load_overload`).

A stale cache. Numba checks a cached kernel against the modification time and size of its own
source file only, but a kernel's machine code also holds the code of the kernels and helpers it
calls, from other modules: after an edit to one of those (a fix in ``kernels._scaling``, say),
the unchanged callers kept running the old code from the cache, in every later process.
Here the stamp that each kernel's cache index is checked against also holds a digest of the
modification times and sizes of all the modules of this package (:func:`_package_stamp`), so a
change to any of them drops every kernel's index and recompiles each kernel once, writing over
its old data files (named by their entries' keys, which do not hold the stamp). An installed
release never changes, so its cache stays valid.
"""

import hashlib
import os
import pickle
import threading
import warnings

import numba
from numba.core import config, sigutils
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.compiler_lock import global_compiler_lock

__all__ = ["KernelCacheWarning", "jit", "jit_inline", "jit_slp", "jit_tiles"]

_OPTIONS = {"nogil": True, "error_model": "numpy"}


class KernelCacheWarning(RuntimeWarning):
    """A kernel's on-disk Numba cache is unusable; the kernel compiles in memory instead."""


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_once(key: str, message: str) -> None:
    """Issue ``message`` as a :class:`KernelCacheWarning` the first time ``key`` is seen."""
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, KernelCacheWarning, stacklevel=3)


def _package_stamp(directory: str = os.path.dirname(__file__)) -> str:
    """A digest of the name, modification time and size of every ``.py`` file in ``directory``.

    Numba's stamp of a kernel's own source file, widened to the package whose modules its code
    is compiled from (module docstring). A file that cannot be read counts as absent.
    """
    entries = []
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".py"))
    except OSError:
        names = []
    for name in names:
        try:
            st = os.stat(os.path.join(directory, name))
        except OSError:
            continue
        entries.append((name, st.st_mtime_ns, st.st_size))
    return hashlib.sha256(repr(entries).encode()).hexdigest()[:24]


_PACKAGE_STAMP = _package_stamp()


def _name(py_func) -> str:
    return f"{py_func.__module__}.{py_func.__qualname__}"


class _KeyedDataFile(IndexDataCacheFile):
    """Numba's index and data files of one kernel, each data file named after its index key.

    Numba names a new data file by the first number free in the index as it read it, so two
    processes that compile different overloads of one kernel at once (different signatures, or
    closures with different constants) can write the same file and leave the index pointing one
    overload at the other's machine code. Named after a digest of its key, a data file holds
    one overload's code only; two processes saving the same overload write the same code. A
    lost index entry (each process rewrites the index it read) only means a compile later.
    """

    def __init__(self, cache_path, filename_base, source_stamp):
        super().__init__(cache_path, filename_base, source_stamp)
        self._base = filename_base

    def save(self, key, data):
        """Save ``data`` for ``key`` in the data file of that key; add it to the index."""
        digest = hashlib.sha256(pickle.dumps(key, protocol=4)).hexdigest()[:24]
        name = f"{self._base}.{digest}.nbc"
        self._save_data(name, data)  # the code first: an index entry never precedes it
        overloads = self._load_index()
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)


class _FallbackCache(FunctionCache):
    """Numba's function cache, switched off for its function when its files cannot be used.

    Its data files are named after their keys (:class:`_KeyedDataFile`), so processes that
    compile one kernel at once cannot leave an index entry pointing to another overload's code.
    """

    def __init__(self, py_func):
        super().__init__(py_func)
        # the source stamp Numba checks a kernel's index against, widened to the package (module
        # docstring): a stale index is dropped whole, and its data files are overwritten in turn
        stamp = (self._impl.locator.get_source_stamp(), _PACKAGE_STAMP)
        self._cache_file = _KeyedDataFile(self._cache_path, self._impl.filename_base, stamp)

    def load_overload(self, sig, target_context):
        """Numba's load; an unreadable file, or code for another signature, gives ``None``.

        Unreadable: garbage, truncated, empty. Another signature: an entry that Numba's own
        numbering of data files let two processes write (``<kernel>.1.nbc`` from both, a cold
        cache under multiprocessing or dask workers; :class:`_KeyedDataFile` names new files
        so that this cannot happen) maps one signature to the other's machine code, which
        Numba would call with the wrong argument types (checked: an ``int64`` call returned the
        ``float64`` code's float). Such an entry is compiled again, and saved under its key.
        """
        try:
            cres = super().load_overload(sig, target_context)
        except Exception as error:  # noqa: BLE001  (any unreadable file: compile instead)
            self._give_up("read", error)
            return None
        if cres is not None:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(cres.signature.args) != tuple(args):
                path = self.cache_path
                _warn_once(
                    f"{path}:signature",
                    f"the Numba cache of {_name(self._py_func)} in {path} held code compiled for "
                    f"{cres.signature.args} where {tuple(args)} was asked for (concurrent "
                    "processes compiling one kernel can leave it so); compiling it again, which "
                    "repairs that entry",
                )
                return None
        return cres

    def save_overload(self, sig, data):
        """Numba's save; a failure to write leaves the kernel compiled in memory only."""
        try:
            super().save_overload(sig, data)
        except Exception as error:  # noqa: BLE001  (disk full, permissions: keep the code)
            self._give_up("write", error)

    def _give_up(self, action: str, error: Exception) -> None:
        self.disable()
        path = self.cache_path
        _warn_once(
            path,
            f"cannot {action} the Numba cache of the kernels in {path} ({type(error).__name__}: "
            f"{error}; first seen for {_name(self._py_func)}); such kernels compile in memory "
            f"in this process. Clear the cache by deleting {path}/*.nbi and {path}/*.nbc, or "
            "point NUMBA_CACHE_DIR to a writable directory",
        )


def _with_cache(dispatcher):
    """Install :class:`_FallbackCache` on ``dispatcher``, or leave it uncached with a warning."""
    py_func = dispatcher.py_func
    try:
        dispatcher._cache = _FallbackCache(py_func)
    except (RuntimeError, OSError) as error:  # no writable directory: no locator
        _warn_once(
            "",
            f"no writable directory for the Numba cache of the kernels ({error}); kernels "
            "compile in memory in every process. Point NUMBA_CACHE_DIR to a writable directory "
            "to cache them",
        )
    return dispatcher


def _decorator(**options):
    def jit(func):
        """Compile ``func`` with Numba (module docstring), cached on disk where possible."""
        return _with_cache(numba.njit(func, **options))

    return jit


class _SlpCache(_FallbackCache):
    """:class:`_FallbackCache` whose index keys say that the code was compiled with SLP.

    Numba's keys record the signature, the target and the bytecode, not the passes or the
    fast-math flags: without this, code compiled with and without the SLP vectorizer, or with
    and without ``contract`` (:func:`jit_tiles`), would share entries.
    """

    def __init__(self, py_func, fastmath=()):
        super().__init__(py_func)
        self._fastmath = tuple(sorted(fastmath))

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), ("slp", 1), ("fastmath", *self._fastmath))


def _with_slp(dispatcher):
    """Make ``dispatcher`` compile (and load from the cache) with the SLP vectorizer on.

    Numba reads ``config.SLP_VECTORIZE`` when it builds the pass pipeline of a compilation;
    the flag is set and restored under the compiler lock that every compilation holds, so no
    compilation in another thread runs while it is set. Numba's compiler reloads its
    configuration from the ``NUMBA_*`` environment variables when they changed since the last
    reload, which would reset the flag mid-compilation; the configuration is reloaded first.
    """
    compile_ = dispatcher.compile
    if isinstance(dispatcher._cache, _FallbackCache):
        fastmath = dispatcher.targetoptions.get("fastmath") or ()
        dispatcher._cache = _SlpCache(dispatcher.py_func, fastmath)

    def compile(sig):
        with global_compiler_lock:
            config.reload_config()  # now, not inside the compilation
            saved = config.SLP_VECTORIZE
            config.SLP_VECTORIZE = 1
            try:
                return compile_(sig)
            finally:
                config.SLP_VECTORIZE = saved

    dispatcher.compile = compile
    return dispatcher


jit = _decorator(**_OPTIONS)
_TILE_OPTIONS = {**_OPTIONS, "fastmath": {"contract"}}
_jit_contract = _decorator(**_TILE_OPTIONS)


def jit_slp(func):
    """:func:`jit` with LLVM's SLP vectorizer on for this kernel's compilation (module docstring)."""
    return _with_slp(jit(func))


def jit_tiles(func):
    """:func:`jit_slp` that also lets LLVM fuse multiply-adds (``contract``; module docstring)."""
    return _with_slp(_jit_contract(func))


jit_inline = _decorator(**_OPTIONS, inline="always")
