"""Fixtures for the rule checker's tests."""

import pytest

from rules import frule, rrule


@pytest.fixture
def rule_for():
    """Register an rrule (and optionally an frule) for a test's own function; undone afterwards."""
    added = []

    def register(f, rrule_fn=None, frule_fn=None):
        if rrule_fn is not None:
            rrule.register(f)(rrule_fn)
            added.append((rrule, f))
        if frule_fn is not None:
            frule.register(f)(frule_fn)
            added.append((frule, f))

    yield register
    for table, f in added:
        table.unregister(f)
