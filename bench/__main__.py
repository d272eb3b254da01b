"""``python -m bench``: the benchmark comparison (placeholder until the benchmark suite lands)."""

import sys


def main() -> int:
    """Say that the suite is not there yet, and succeed."""
    print(
        "The benchmark suite has not landed yet (see the issue 'The benchmark suite and the "
        "main command'); nothing to run."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
