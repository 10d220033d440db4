"""Pytest configuration: make tests/support.py importable; mark the slowest tests ``slow``, so
that ``pytest -m "not slow"`` leaves them out in day-to-day work (README, Development); and give
the fresh-venv install tests a head start (``tests/headstart.py``): their installs begin with
the session, in the background, and the tests themselves run last. The suite runs on every
core (pytest-xdist, ``-n auto`` in pyproject.toml), at most four test processes."""

import gc
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Threads that finished their share of an OpenMP loop sleep at once instead of spinning: the
# suite keeps both cores busy, and spinning threads (a third of a test process's CPU, measured
# with perf) took them from the processes doing the work. Set before torch loads libgomp; every
# process the tests start inherits it. It changes no result.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import headstart  # noqa: E402  (importable only once the path above is set)

# Node ids (or their start) of the slowest tests (tests/slow.txt): by hand, whole files and
# groups (whole `grade batch` runs, the corpus, pasted snippets, the sandbox with layers off);
# measured, every test over a second in a run of the whole suite (bench/slow_tests.py). The
# fresh-venv installs are marked ``install`` besides.
SLOW = tuple(
    line.strip()
    for line in (Path(__file__).parent / "slow.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.lstrip().startswith("#")
)


def pytest_collection_finish(session):
    """Out of the collector's sight what collection imported (as ``heavy_imports`` does for a
    judge): later collections then walk only what the tests make."""
    gc.freeze()


def runs_tests(config) -> bool:
    """False in pytest-xdist's controller, which only hands the tests to its workers."""
    if hasattr(config, "workerinput"):  # an xdist worker
        return True
    return not config.getoption("numprocesses", default=None)  # -n 0, or no xdist


def pytest_configure(config):
    headstart.configure()  # before xdist starts its workers: they inherit the shared folder
    if runs_tests(config):
        # A test process judges in process (grade_folder) as `grade`'s judge does: set up the
        # same way, before any test module imports torch. The controller skips it: its torch
        # import would only hold back the start of the workers (about 1.5 s).
        from grader.judge.ready import ready_to_judge

        ready_to_judge()
    config.addinivalue_line(
        "markers", "install(name): needs the fresh-venv install NAME of tests/headstart.py"
    )


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one test process per core, at most 4 (a test may run a whole grade: judge,
    fork server and workers, a few hundred MB each)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, 4))


@pytest.hookimpl(specname="pytest_collection_modifyitems", tryfirst=True)  # before -m selects
def pytest_collection_modifyitems_mark_slow(items):
    for item in items:
        name = item.nodeid.rpartition("/")[2]  # tests/test_x.py::test_y[...] -> test_x.py::...
        if name.startswith(SLOW) or item.get_closest_marker("install"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)  # after -m and -k: only the installs of tests that will run
def pytest_collection_modifyitems(session, config, items):
    installs = [i for i in items if i.get_closest_marker("install")]
    if not installs:
        return
    items[:] = [i for i in items if not i.get_closest_marker("install")] + installs
    names = [i.get_closest_marker("install").args[0] for i in installs]
    headstart.begin(list(dict.fromkeys(names)))


@pytest.fixture(scope="session", autouse=True)
def shared_fork_server():
    """The test process's fork server, started with the defaults before any test runs `grade`
    in process: a one-shot `grade` would start it with only the spares it needs, no refill."""
    from grader.judge.launch.starter import prestart

    prestart()
    import pastebox  # noqa: F401  (its boxes take this environment, before a test changes it)


@pytest.fixture
def fresh_install(request):
    """The fresh-venv install named by the test's ``install`` marker, begun with the session
    (tests/headstart.py) and removed when the test is done."""
    with headstart.using(request.node.get_closest_marker("install").args[0]) as job:
        yield job


@pytest.fixture(scope="module")
def solution_clone(tmp_path_factory) -> Path:
    """A student's clone holding the solution: where a snippet must show success."""
    from support import clone_of

    return clone_of(tmp_path_factory.mktemp("solution"))


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade one corpus file for one exercise, once per test process: (its clone, the result).
    tests/test_corpus.py grades every case through it, and the tests that look closer at a
    case (its counterexample, hint, snippet) get the same grading instead of a second one."""
    from support import CORPUS, clone_of, grade_folder

    cache: dict = {}

    def grade_case(exercise_id: str, case: str):
        if (exercise_id, case) not in cache:
            module = "ex" + exercise_id.replace(".", "_")
            folder = clone_of(
                tmp_path_factory.mktemp("sub"), {exercise_id: CORPUS / module / f"{case}.py"}
            )
            # Snippets name the clone as its student does ("."): pasted in a clone, they run it.
            (result,) = grade_folder(folder, [exercise_id], shown_as=".").exercises
            cache[exercise_id, case] = folder, result
        return cache[exercise_id, case]

    return grade_case


def pytest_sessionfinish(session, exitstatus):
    headstart.finish()


@pytest.fixture(autouse=True)
def _packs_in_use_stay():
    """A test that changes the course (``grader.shared.course.use``, ``choose``) or sets
    ``GRADER_PACK`` must put it back (``course.using`` does): the course is the whole
    process's, and every later test in it would grade another pack's exercises. Restored, and
    the test fails saying so."""
    from grader.shared import course

    before, course_before = os.environ.get("GRADER_PACK"), course.current()
    yield
    after, course_after = os.environ.get("GRADER_PACK"), course.current()
    if after != before:
        if before is None:
            os.environ.pop("GRADER_PACK", None)
        else:
            os.environ["GRADER_PACK"] = before
        pytest.fail(f"the test left GRADER_PACK={after!r} (it was {before!r})")
    if course_after != course_before:
        course.use(course_before)
        pytest.fail(f"the test left the course {course_after.choice!r} in use")
