"""np.fft: every transform's rules against finite differences, in each dtype, with batch axes."""

import numpy as np
import pytest

import rules  # noqa: F401  (registers the rules)
from rules import rrule
from rules.testing import check_frule, check_rrule

COMPLEX_INPUT = [np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn]
REAL_INPUT = [np.fft.rfft, np.fft.rfft2, np.fft.rfftn, np.fft.ihfft]
HALF_SPECTRUM = [np.fft.irfft, np.fft.irfft2, np.fft.irfftn, np.fft.hfft]
ONE_AXIS = {np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft}

NORMS = [None, "ortho", "forward"]


def _options(f, shape):
    """Calls of ``f`` on an array of ``shape``: defaults, cut, padded, another axis, each norm."""
    if f in ONE_AXIS:
        return [
            ((), {}),
            ((shape[-1] - 1,), {}),
            ((shape[-1] + 2, 0), {}),
            ((None, 1), {"norm": "ortho"}),
            ((), {"norm": "forward"}),
        ]
    axes = (-2, -1) if f in (np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2) else None
    return [
        ((), {}),
        ((), {"s": (shape[0] + 1, shape[-1] - 1), "axes": (0, -1)}),
        ((), {"axes": (1, 0), "norm": "ortho"}),
        ((), {"norm": "forward"} if axes is None else {"axes": (0, 2), "norm": "forward"}),
    ]


def _cases(functions, dtypes):
    for f in functions:
        for dtype in dtypes:
            options = _options(f, (3, 4, 5))
            if (
                np.dtype(dtype).itemsize <= 8
                and np.dtype(dtype).kind in "fc"
                and dtype
                not in (
                    np.float64,
                    np.complex128,
                )
            ):
                options = options[:2]  # single precision: its dtype and one padding case
            for args, kwargs in options:
                yield f, dtype, args, kwargs


def _id(v):
    return getattr(v, "__name__", None) or (np.dtype(v).name if isinstance(v, type) else "")


@pytest.mark.parametrize(
    ("f", "dtype", "args", "kwargs"),
    list(_cases(COMPLEX_INPUT, [np.float64, np.float32, np.complex128]))
    + list(_cases(REAL_INPUT, [np.float64, np.float32]))
    + list(_cases(HALF_SPECTRUM, [np.complex128, np.complex64, np.float64])),
    ids=_id,
)
def test_transform_rules(make_array, f, dtype, args, kwargs):
    x = make_array((3, 4, 5), dtype)
    check_rrule(f, x, *args, **kwargs)
    check_frule(f, x, *args, **kwargs)


@pytest.mark.parametrize("f", COMPLEX_INPUT + REAL_INPUT + HALF_SPECTRUM, ids=_id)
def test_single_signal(make_array, f):
    x = make_array((4, 4) if f not in ONE_AXIS else (6,), np.complex128)
    if f in REAL_INPUT:
        x = x.real
    check_rrule(f, x)
    check_frule(f, x)


@pytest.mark.parametrize("f", [np.fft.fft, np.fft.rfft])
def test_norm_given_positionally(make_array, f):
    x = make_array((5,), np.float64)
    check_rrule(f, x, None, -1, "ortho")
    check_frule(f, x, None, -1, "ortho")


def test_dtype_is_kept(make_array):
    x = make_array((6,), np.float32)
    y, pullback = rrule(np.fft.rfft, x)
    assert y.dtype == np.complex64
    assert pullback(np.ones_like(y))[1].dtype == np.float32


def test_out_is_refused(make_array):
    x = make_array((4,), np.complex128)
    with pytest.raises(ValueError, match=r"np\.fft\.fft.*out"):
        rrule(np.fft.fft, x, out=np.empty(4, complex))


def test_s_without_axes_is_refused(make_array):
    with pytest.raises(ValueError, match="axes"):
        rrule(np.fft.fftn, make_array((3, 3)), (3, 3))
