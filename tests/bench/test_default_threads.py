from bench.default_threads import child_environment, measure_steps
from bench.environment import THREAD_VARIABLES


def test_default_child_has_no_thread_variables_and_the_other_one_thread(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setenv("SOMETHING_ELSE", "kept")
    default = child_environment(one_thread=False)
    assert not set(THREAD_VARIABLES) & set(default)
    assert default["SOMETHING_ELSE"] == "kept"
    single = child_environment(one_thread=True)
    assert all(single[v] == "1" for v in THREAD_VARIABLES)


def test_measure_steps_times_every_step():
    times = measure_steps(repeats=1)
    assert set(times) == {
        "cholesky rrule+pb, 256",
        "np.linalg.cholesky after it, 256",
        "cholesky rrule+pb, 10000x(4x4)",
    }
    assert all(t > 0 for t in times.values())
