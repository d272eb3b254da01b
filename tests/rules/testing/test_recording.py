"""RecordingTangent: the protocol's operations, logged; every conversion refused."""

import numpy as np
import pytest

from rules.testing import RecordingTangent, TangentConversionError
from tangents import ZeroTangent


def test_the_recording_type_fails_on_every_conversion():
    t = RecordingTangent(np.ones((2, 2)))
    conversions = [
        np.asarray,
        np.sum,  # a ufunc: refused by numpy itself (__array_ufunc__ = None)
        lambda t: np.reshape(t, -1),
        lambda t: np.concatenate([t]),
        lambda t: np.result_type(t),
        lambda t: t[0],
        list,
        len,
        bool,
        float,
    ]
    for convert in conversions:
        with pytest.raises((TangentConversionError, TypeError)):
            convert(t)
    assert np.shape(t) == (2, 2)  # numpy reads .shape without converting
    assert t.log == []


def test_each_operation_is_logged_and_computed_on_the_data():
    log = []
    t = RecordingTangent(np.arange(4.0).reshape(2, 2), log)
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    results = {
        "t + u": t + t,
        "t - u": t - t,
        "-t": -t,
        "s * t": 2 * t,
        "t / s": t / 2,
        "t @ M": t @ M,
        "M @ t": M @ t,
        "t.T": t.T,
        "t.mT": t.mT,
        "t.conj()": t.conj(),
        "t.real": t.real,
        "t.imag": t.imag,
    }
    assert log == list(results)
    d = t.data
    expected = [d + d, d - d, -d, 2 * d, d / 2, d @ M, M @ d, d.T, d.mT, d, d, 0 * d]
    for got, want in zip(results.values(), expected, strict=True):
        assert isinstance(got, RecordingTangent)
        np.testing.assert_array_equal(got.data, want)


def test_unknown_operands_are_left_to_the_library():
    t = RecordingTangent(np.ones((2, 2)))
    assert t + ZeroTangent() is t  # NotImplemented: ZeroTangent answers
    assert ZeroTangent() @ t is ZeroTangent()
    with pytest.raises(TypeError):
        t * np.ones((2, 2))  # an elementwise product is not part of the protocol
