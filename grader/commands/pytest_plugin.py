"""pytest front end: every check of every exercise as a test item, judged by ``grade``.

Inert unless asked: it adds items only with ``pytest --grade[=PATH]`` or an ini option
``grade_path`` (set to ``"."`` in the student edition's ``pyproject.toml``), so that installing
the grader never changes anyone else's test suite.

The submission is graded once per session, by the same judge and sandbox as ``grade`` (one
``grade()`` call, on the first item that runs, for the exercises that have selected items); each
item then reports its check's verdict, with the grader's message, counterexample and snippet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.shared.registry import Exercise


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grade", "grading the exercises of a pack (grader plugin)")
    group.addoption(
        "--grade",
        nargs="?",
        const=".",
        default=None,
        dest="grade_path",
        metavar="PATH",
        help="grade PATH (a folder with exercises/, or a notebook; default: .), one test per "
        "check; write --grade=PATH when other arguments follow",
    )
    group.addoption(
        "--grade-exercise",
        action="append",
        dest="grade_exercises",
        metavar="ID",
        help="grade only the exercise with this id (as grade -e); repeatable",
    )
    group.addoption(
        "--grade-seed",
        type=int,  # checked with GRADE_SEED when the session starts (grader.judge.seeds.for_grade)
        default=None,
        dest="grade_seed",
        metavar="N",
        help="draw other examples (as grade --seed)",
    )
    group.addoption(
        "--grade-max-examples",
        type=int,
        default=None,
        dest="grade_max_examples",
        metavar="N",
        help="examples per check (as grade --max-examples)",
    )
    parser.addini("grade_path", "grade this submission when pytest runs (e.g. '.')", default="")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("grade_path")
    base = config.invocation_params.dir
    if not path:
        path = config.getini("grade_path")
        base = config.inipath.parent if config.inipath else config.rootpath
    if not path:
        return  # inert
    config.addinivalue_line("markers", "grade: a check of the exercise grader")
    config.pluginmanager.register(GradeSession(config, (base / path).resolve()), "grade-session")


class GradeSession:
    """Loads the submission, makes the items, grades once, and cleans up."""

    def __init__(self, config: pytest.Config, path: Path):
        from grader import pipeline
        from grader.judge.seeds import SeedError, for_grade
        from grader.shared import registry

        self.config = config
        try:  # as grade: --grade-seed, else the course's GRADE_SEED (CI), else the public seed
            self.seed = for_grade(config.getoption("grade_seed"))
        except SeedError as exc:
            raise pytest.UsageError(f"grade: {exc}") from None
        self.path = path
        ids = config.getoption("grade_exercises")
        try:
            self.exercises = registry.select(ids)
        except KeyError as exc:
            raise pytest.UsageError(f"--grade-exercise: unknown exercise {exc.args[0]!r}") from None
        try:
            self.submission = pipeline.open_path(path)
        except pipeline.SubmissionError as exc:
            raise pytest.UsageError(f"grade: {exc}") from None
        self.needed: set[str] = set()
        self._result = None

    def result(self):
        """The grading result, computed on first use for the exercises that have items."""
        if self._result is None:
            import torch

            from grader import pipeline

            # One thread while judging, as grade's judge: the cores are the workers' (an idle
            # OpenMP thread of this process would spin on one). The tests' own count is back after.
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                request = pipeline.Request(
                    seed=self.seed,
                    exercises=[e.id for e in self.exercises if e.id in self.needed] or None,
                    max_examples=self.config.getoption("grade_max_examples"),
                )
                self._result = pipeline.finish(self.submission, request)
            finally:
                torch.set_num_threads(threads)
        return self._result

    def location(self, exercise: Exercise) -> Path:
        """The exercise's file (where it would be, when it is missing)."""
        return self.submission.files.get(exercise.id) or (
            self.submission.root / "exercises" / exercise.filename
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list) -> None:
        from grader.shared.heavyimports import heavy_imports

        with heavy_imports():  # torch and the checks, as a judge imports them
            from grader.judge.scoring import checks_for

            checks = {ex.id: checks_for(ex) for ex in self.exercises}

        new: list[pytest.Item] = []
        notebook = None
        if self.path.suffix == ".ipynb":
            notebook = SubmissionFile.from_parent(session, path=self.path)
        parent: pytest.Collector
        for ex in self.exercises:
            if notebook is not None:  # work.ipynb::<exercise id>::<check>
                parent = ExerciseNode.from_parent(notebook, name=ex.id)
            else:  # exercises/<the exercise's file>::<check>
                parent = SubmissionFile.from_parent(session, path=self.location(ex))
            for check in checks[ex.id]:
                item = CheckItem.from_parent(parent, name=check.name, grading=self, exercise=ex)
                item.add_marker("grade")
                new.append(item)
        items[:0] = new
        # Tell the reporters (counts, progress) about the items, as a collector would.
        session.ihook.pytest_collectreport(
            report=pytest.CollectReport(session.nodeid, "passed", None, [*new])
        )

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.needed = {i.exercise.id for i in session.items if isinstance(i, CheckItem)}

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self._result is None:
            return
        r = self._result
        terminalreporter.section("grade")
        for ex in r.exercises:
            terminalreporter.line(
                f"{ex.id}  {ex.title:<50} {ex.score:5.1f}/{ex.max_score:g}  {ex.status}"
            )
        terminalreporter.line(f"Score: {r.score:g}/{r.max_score:g}  ({r.seed_text})")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.submission.cleanup()


class SubmissionFile(pytest.File):
    """An exercise file, or the notebook the exercises were taken from."""

    def collect(self):  # the items are made by GradeSession, never collected from disk
        return []


class ExerciseNode(pytest.Collector):
    """One exercise of a notebook."""

    def collect(self):
        return []


class CheckFailure(Exception):
    """A check the grader did not pass; its text is the grader's explanation."""


class CheckItem(pytest.Item):
    def __init__(self, *, grading: GradeSession, exercise: Exercise, **kwargs):
        super().__init__(**kwargs)
        self.grading = grading
        self.exercise = exercise

    def runtest(self) -> None:
        result = self.grading.result()
        ex = next((e for e in result.exercises if e.id == self.exercise.id), None)
        check = next((c for c in ex.checks if c.name == self.name), None) if ex else None
        if ex is None or check is None:
            raise CheckFailure(f"the grader did not run this check of exercise {self.exercise.id}")
        self.user_properties += [("points", check.points), ("max_points", check.max_points)]
        if not check.passed:
            from grader.result.common import check_text  # only once a check has failed

            # The cause with its hint, the message, the evidence, the counterexample, the hint.
            lines = [f"[{self.exercise.id} {ex.status}] {check_text(check, reproduce=False)}"]
            if check.reproduce:
                lines.append("Reproduce (paste into Python in your clone):")
                lines += ["    " + ln for ln in check.reproduce.rstrip().splitlines()]
            raise CheckFailure("\n".join(lines))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.exercise.id} {self.name}"
