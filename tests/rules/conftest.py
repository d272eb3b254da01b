"""Fixtures for rule tests: registrations that are undone after each test."""

import pytest

from rules import frule, rrule


@pytest.fixture
def registered():
    """Register rules for a test's own functions; they are removed again afterwards."""
    added = []

    def register(table, f, **options):
        added.append((table, f))
        return table.register(f, **options)

    yield register
    for table, f in added:
        table.unregister(f)


@pytest.fixture
def tables():
    return rrule, frule
