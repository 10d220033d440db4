"""Pytest configuration: make tests/support.py importable, and mark the slowest tests ``slow``
so that ``pytest -m "not slow"`` leaves them out in day-to-day work (README, Development)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Node ids (or their start) of the slowest tests, measured with --durations: fresh virtual
# environments with torch installed, whole `grade batch` runs, the corpus of answers, snippets
# run in new interpreters, a notebook run in a kernel, the sandbox with layers turned off.
SLOW = (
    "test_release.py::test_the_release_installs_in_a_fresh_venv",
    "test_gradescope_bundle.py::test_setup_sh_installs",
    "test_course_seed_batch.py::",
    "test_batch.py::",
    "test_batch_insight_e2e.py::",
    "test_corpus.py::",
    "test_checks_ch3.py::test_snippets_show_the_failure",
    "test_checks_ch4.py::test_snippet_shows_the_failure",
    "test_checks_ch4.py::test_4_3_",
    "test_checks_ch4.py::test_an_answer_that_builds_gpt2_xl",
    "test_notebook_command.py::test_run_in_a_kernel",
    "test_sandbox_hostile.py::test_spawn_launcher",
    "test_sandbox_hostile.py::test_all_exercises_with_several_hostile_files",
    "test_sandbox_hostile.py::test_hostile_with_layers_off",
    "test_sandbox_hostile.py::test_solution_with_layers_off",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.nodeid.rpartition("/")[2]  # tests/test_x.py::test_y[...] -> test_x.py::...
        if name.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
