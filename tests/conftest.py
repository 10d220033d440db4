"""Pytest configuration: make tests/support.py importable, and give the fresh-venv install
tests a head start (``tests/headstart.py``): their installs begin with the session, in the
background, and the tests themselves run last."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import headstart  # noqa: E402  (importable only once the path above is set)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "install(name): needs the fresh-venv install NAME of tests/headstart.py"
    )


def pytest_collection_modifyitems(session, config, items):
    installs = [i for i in items if i.get_closest_marker("install")]
    if not installs:
        return
    items[:] = [i for i in items if not i.get_closest_marker("install")] + installs
    names = [i.get_closest_marker("install").args[0] for i in installs]
    headstart.begin(list(dict.fromkeys(names)))


def pytest_sessionfinish(session, exitstatus):
    headstart.cleanup()
