"""Pytest configuration: make tests/support.py importable and keep hypothesis quiet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# The two tests that install the student edition and the Gradescope bundle into fresh virtual
# environments take minutes, mostly unpacking torch. They go first, so that with pytest-xdist
# (``-n 2 --dist loadfile``, set in pyproject.toml) one worker installs while the other runs
# the rest of the suite.
SLOW_FIRST = ("test_release.py", "test_gradescope_bundle.py")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name not in SLOW_FIRST)
