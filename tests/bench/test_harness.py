"""The benchmark harness checks a row against its reference before timing it."""

import dataclasses
import itertools
import re

import numpy as np
import pytest
from bench.case import Size
from bench.cases import determinant, products, select
from bench.harness import Row, compare, flatten_tangent, run_case
from bench.table import format_ratio, format_table
from bench.timing import MIN_ROUNDS, Timing, measure

from tangents import Tangent, Thunk, ZeroTangent

MATMUL_PULLBACK = products.CASES[0]


def test_a_disagreeing_reference_marks_the_row_failed_without_a_time():
    def wrong(inputs):
        A_bar, B_bar = products.matmul_pullback_numpy(inputs)
        return 1.01 * A_bar, B_bar

    case = dataclasses.replace(MATMUL_PULLBACK, reference=wrong)
    row = run_case(case, Size(4), budget=0.01)
    assert row.status == "FAILED"
    assert row.timings == {}
    assert row.speedup is None
    assert 0.005 < row.max_error < 0.02
    assert "exceeds rtol" in row.message
    table = format_table([row, run_case(MATMUL_PULLBACK, Size(4), budget=0.01)], ["jax"])
    header, _, failed, _ = table.splitlines()[:4]
    assert failed.split()[:3] == ["matmul.pullback", "4", "FAILED"]
    assert failed.split()[-1] == "-"
    assert len(failed) <= len(header)  # one cell per column, the last one the jax column
    assert "matmul.pullback 4: FAILED: " in table


def test_an_agreeing_row_has_every_timing_and_its_first_call():
    row = run_case(MATMUL_PULLBACK, Size(4), budget=0.01)
    assert row.status == "ok", row.message
    assert set(row.timings) == {"ours", "total", "numpy", "forward"}
    assert row.first_call() >= 0
    assert row.as_dict()["speedup"] == pytest.approx(row.best("numpy") / row.best("ours"))


def test_an_exception_becomes_an_error_row():
    def broken(size, rng):
        raise RuntimeError("no inputs today")

    row = run_case(dataclasses.replace(MATMUL_PULLBACK, inputs=broken), Size(4), budget=0.01)
    assert row.status == "ERROR"
    assert "no inputs today" in row.message


def test_compare_requires_equal_shapes_and_rejects_nan():
    a = np.ones((2, 2))
    assert compare((a,), (a,), 1e-7) == (True, 0.0)
    assert not compare((a,), (np.ones((2, 3)),), 1e-7)[0]
    assert not compare((a * np.nan,), (a,), 1e-7)[0]
    assert not compare((a, a), (a,), 1e-7)[0]


def test_select_defaults_to_the_quick_set_and_names_valid_sizes():
    labels = {size.label for _, size in select()}
    assert labels == {"4", "10000x4", "1000x16", "256"}
    assert {size.label for _, size in select(full=True)} >= {"16", "1024"}
    with pytest.raises(ValueError, match="valid: 4, 16, 256, 1024, 10000x4, 1000x16"):
        select(sizes=["5"])


def test_a_zero_tangent_is_compared_as_zeros_of_its_primal():
    primal = np.linalg.slogdet(np.eye(3)[None].repeat(2, axis=0))
    tangent = Tangent(type(primal), sign=ZeroTangent(), logabsdet=np.ones(2))
    sign_dot, logabsdet_dot = flatten_tangent(tangent, primal)
    np.testing.assert_array_equal(sign_dot, np.zeros(2))
    np.testing.assert_array_equal(logabsdet_dot, np.ones(2))
    assert [a.shape for a in flatten_tangent(ZeroTangent(), (np.ones(3), 1.0))] == [(3,), ()]


def test_the_slogdet_pushforward_row_lines_up_with_its_reference():
    case = next(c for c in determinant.CASES if c.name == "slogdet.pushforward")
    for size in (Size(4), Size(4, batch=3)):
        row = run_case(case, size, budget=0.01)
        assert row.status == "ok", row.message


def test_the_timed_pullback_is_the_checked_one(monkeypatch):
    from bench import harness

    real_rrule, made = harness.rrule, []

    def counting_rrule(f, *args, **kwargs):
        y, pullback = real_rrule(f, *args, **kwargs)

        def counted(y_bar):
            counted.calls += 1
            return pullback(y_bar)

        counted.calls = 0
        made.append(counted)
        return y, counted

    monkeypatch.setattr(harness, "rrule", counting_rrule)
    inputs = MATMUL_PULLBACK.inputs(Size(4), np.random.default_rng(0))
    inputs.output = MATMUL_PULLBACK.forward(inputs)
    callables, _, _, _ = harness._ours(MATMUL_PULLBACK, inputs)
    assert len(made) == 1  # one rrule call so far: the checked one
    callables["ours"]()
    assert len(made) == 1
    assert made[0].calls == 2  # the timed call reused the checked pullback


@pytest.mark.parametrize("lazy", [False, True])
def test_a_lazy_result_is_evaluated_inside_every_timed_call(monkeypatch, lazy):
    """Thunks in a pullback's or pushforward's result are evaluated by each timed call (ours and
    the whole call); a result of plain arrays is timed as returned, with no wrapper."""
    from bench import harness

    real_rrule, real_frule, evaluated = harness.rrule, harness.frule, []

    def thunked(value):
        def evaluate():
            evaluated.append(1)
            return value

        return Thunk(evaluate) if lazy else value

    def rrule_of(f, *args, **kwargs):
        y, pullback = real_rrule(f, *args, **kwargs)
        return y, lambda y_bar: tuple(thunked(x) for x in pullback(y_bar))

    def frule_of(tangents, f, *args, **kwargs):
        y, y_dot = real_frule(tangents, f, *args, **kwargs)
        return thunked(y), thunked(y_dot)

    monkeypatch.setattr(harness, "rrule", rrule_of)
    monkeypatch.setattr(harness, "frule", frule_of)
    for case in products.CASES:  # the matmul pullback and pushforward
        inputs = case.inputs(Size(4), np.random.default_rng(0))
        inputs.output = case.forward(inputs)
        callables, _, _, _ = harness._ours(case, inputs)
        for name in ("ours", "total") if case.kind == "pullback" else ("ours",):
            evaluated.clear()
            result = callables[name]()
            assert harness.settled(result)  # nothing left to evaluate, lazy or not
            assert len(evaluated) == (len(result) if lazy else 0)


def test_adapter_rows_check_their_peers_given_the_rules_forward_outputs(monkeypatch):
    # A rule whose forward flips the eigenvector signs that numpy's eigh returns (a gauge), and
    # a peer that computes through that rule, as the rules.interop adapters do: checked against
    # the reference at numpy's outputs it disagrees, at the rule's outputs it agrees.
    from bench.cases import eigh

    from bench import harness

    real_rrule = harness.rrule

    def flipping_rrule(f, *args, **kwargs):
        (w, V), pullback = real_rrule(f, *args, **kwargs)
        return (w, -V), lambda y_bar: pullback((y_bar[0], -y_bar[1]))

    monkeypatch.setattr(harness, "rrule", flipping_rrule)

    class ThroughTheRule:
        name = "jax"

        def supports(self, case):
            return True

        def runner(self, case, inputs):
            _, pullback = flipping_rrule(case.function, *inputs.args)
            return (lambda: pullback(inputs.cotangent)[1:]), tuple

        def total_runner(self, case, inputs):
            return None

    case = next(c for c in eigh.CASES if c.op == "eigh" and c.kind == "pullback")
    statuses = {}
    for use_rule in (False, True):
        row_case = dataclasses.replace(case, peers_use_rule=use_rule)
        prepared = harness.prepare(row_case, Size(4), [ThroughTheRule()])
        statuses[use_rule] = prepared.peers["jax"].status
    assert statuses == {False: "mismatch", True: "ok"}


def test_a_skipped_peer_total_is_never_built_at_its_size():
    # A peer whose whole call would hang at one size (bench.cases.triangular): its total runner
    # must not even be built there, while the pullback column and other sizes keep theirs.
    from bench import harness

    built = []

    class Peer:
        name = "jax"

        def supports(self, case):
            return True

        def runner(self, case, inputs):
            _, pullback = harness.rrule(case.function, *inputs.args)
            return (lambda: pullback(inputs.cotangent)[1:]), tuple

        def total_runner(self, case, inputs):
            built.append(inputs.args[0].shape)
            _, pullback = harness.rrule(case.function, *inputs.args)
            return (lambda: pullback(inputs.cotangent)[1:]), tuple

    case = next(c for c in products.CASES if c.kind == "pullback")
    case = dataclasses.replace(case, peer_totals_skipped=frozenset({("jax", "3x4")}))
    skipped = harness.prepare(case, Size(4, batch=3), [Peer()])
    kept = harness.prepare(case, Size(4), [Peer()])
    assert "jax" in skipped.callables
    assert "jax_total" not in skipped.callables
    assert "jax_total" in kept.callables
    assert built == [(4, 4)]


def test_noise_times_the_formula_a_second_time_and_reports_the_ratio():
    row = run_case(MATMUL_PULLBACK, Size(4), budget=0.01, noise=True)
    assert row.status == "ok", row.message
    assert set(row.timings) == {"ours", "total", "numpy", "numpy_again", "forward"}
    assert row.noise == pytest.approx(row.best("numpy") / row.best("numpy_again"))
    document = row.as_dict()
    assert document["formula_over_formula"] == row.noise
    assert document["below_beyond_noise"] in (True, False)
    table = format_table([row])
    header, _, line = table.splitlines()[:3]
    assert header.split()[4:6] == ["speed-up", "A/A"]
    cells = rf"{re.escape(format_ratio(row.speedup))} +{re.escape(format_ratio(row.noise))} "
    assert re.search(cells, line)  # the A/A ratio right after the speed-up
    assert "Below the formula beyond noise" in table
    plain = run_case(MATMUL_PULLBACK, Size(4), budget=0.01)
    assert plain.noise is None
    assert plain.below_beyond_noise is None
    assert "A/A" not in format_table([plain])


@pytest.mark.parametrize(
    ("ours", "again", "below"),
    [
        ((1.03, 1.04, 1.05), (1.00, 1.02, 0.99), True),  # slower in every round than any A/A
        ((1.03, 1.01, 1.05), (1.00, 1.02, 0.99), False),  # one round within the A/A spread
        ((1.01, 0.99, 1.00), (1.02, 0.98, 1.01), False),  # a tie
        ((0.90, 0.91, 0.92), (1.00, 1.01, 0.99), False),  # faster than the formula
        # slower than the A/A ratio of its own round each time, not than the largest one
        ((1.02, 1.05, 1.05), (1.00, 1.03, 1.00), False),
    ],
)
def test_a_row_is_below_beyond_noise_only_when_every_round_says_so(ours, again, below):
    def timing(samples):
        return Timing(min(samples), sorted(samples)[1], loops=1, rounds=3, samples=samples)

    formula = (1.0, 1.0, 1.0)
    times = {"ours": timing(ours), "numpy": timing(formula), "numpy_again": timing(again)}
    row = Row(MATMUL_PULLBACK, Size(4), "ok", timings=times)
    assert row.below_beyond_noise is below
    listed = "matmul.pullback 4." in format_table([row]).splitlines()[-1]
    assert listed is below
    assert (
        Row(MATMUL_PULLBACK, Size(4), "ok", timings={"ours": timing(ours)}).below_beyond_noise
        is None
    )


def test_rounds_change_which_callable_runs_before_which():
    # a rotation of one order kept each callable's predecessor in all but one position, and a
    # fixed seed gave every row the same orders: two callables doing the same work must follow
    # each other either way about equally often (each ordered pair of neighbours has chance 1/5
    # per round; over 210 rounds fewer than 20 has a chance below 1e-4)
    calls = []
    funcs = {name: (lambda name=name: calls.append(name)) for name in "abcde"}
    rounds = []
    for _ in range(70):  # rows: one measure each, the minimum of rounds
        calls.clear()
        measure(funcs, budget=0.0)
        assert len(calls) == 5 * (1 + MIN_ROUNDS)  # one calibration call each, then the rounds
        rounds += [calls[5 * r : 5 * r + 5] for r in range(1, 1 + MIN_ROUNDS)]
    c_then_d = sum(
        1 for order in rounds for pair in itertools.pairwise(order) if pair == ("c", "d")
    )
    d_then_c = sum(
        1 for order in rounds for pair in itertools.pairwise(order) if pair == ("d", "c")
    )
    assert c_then_d >= 20
    assert d_then_c >= 20
