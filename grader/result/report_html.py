"""The HTML report of one result: a single self-contained page (inline style and script, no
fonts, images or scripts from the network), rendered from ``templates/report.html.j2`` with
autoescaping, so that anything a student's code wrote shows as text."""

from __future__ import annotations

import functools
from dataclasses import astuple, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2

from grader.result.common import (
    Message,
    cause_key,
    clip,
    count_of,
    is_not_done,
    is_unrun,
    not_done,
    parse_message,
    percent,
    points,
    shared_problem,
    shown_under,
    status_label,
    student_file,
    value_text,
    visible,
    without_cause,
)
from grader.result.schema import CheckResult, ExerciseResult, GradeResult
from grader.result.template_files import templates_dir

TEMPLATES = templates_dir()
TEMPLATE = "report.html.j2"
LONG_VALUE = 60  # characters beyond which a counterexample value gets a block of its own


@dataclass
class CheckView:
    id: str
    name: str
    passed: bool
    unrun: bool
    points: str
    max_points: str
    message: Message
    counterexample: Any
    reproduce: str | None
    note: str = ""  # said beside a check listed without its details


@dataclass
class CauseView:
    """One cause of an exercise's failures, shown once above the checks it breaks: the first of
    them in full, the others as rows."""

    text: str
    hint: str
    checks: list[str]
    first: CheckView | None = None
    rest: list[CheckView] = field(default_factory=list)


@dataclass
class ExerciseView:
    id: str
    anchor: str
    title: str
    file: str
    status: str
    label: str
    score: str
    max_score: str
    percent: float
    problem: Message | None
    not_done: str | None = None  # what the unwritten answers say, once
    causes: list[CauseView] = field(default_factory=list)
    failed: list[CheckView] = field(default_factory=list)
    repeats: list[CheckView] = field(default_factory=list)  # fail with a message shown above
    unrun: list[CheckView] = field(default_factory=list)
    unfinished: list[CheckView] = field(default_factory=list)  # not done yet
    passed: list[CheckView] = field(default_factory=list)


def _clipped(msg: Message) -> Message:
    """The message with runaway text cut and control characters spelled out."""
    return Message(*(visible(clip(part)) for part in astuple(msg)))


def _check_view(anchor: str, i: int, check: CheckResult) -> CheckView:
    return CheckView(
        id=f"{anchor}-c{i + 1}",
        name=check.name,
        passed=check.passed,
        unrun=is_unrun(check),
        points=points(check.points),
        max_points=points(check.max_points),
        message=_clipped(without_cause(check, parse_message(check.message))),
        counterexample=check.counterexample,
        reproduce=check.reproduce,
    )


def _exercise_view(ex: ExerciseResult) -> ExerciseView:
    anchor = "ex-" + ex.id.replace(".", "-")
    unfinished = not_done(ex)
    problem = shared_problem(ex) if unfinished is None else None
    view = ExerciseView(
        id=ex.id,
        anchor=anchor,
        title=ex.title,
        file=student_file(ex.id),
        status=ex.status,
        label=status_label(ex),
        score=points(ex.score),
        max_score=points(ex.max_score),
        percent=_percent(ex.score, ex.max_score),
        problem=None if problem is None else _clipped(parse_message(problem)),
        not_done=None if unfinished is None else visible(clip(unfinished[0])),
    )
    under = shown_under(ex)  # a cause that follows from the first is shown under it
    causes = {
        d["key"]: CauseView(visible(clip(d["cause"])), visible(clip(d["hint"])), d["checks"])
        for d in (ex.diagnosis if problem is None else [])
        if under.get(d["key"], d["key"]) == d["key"]
    }
    for d in ex.diagnosis if problem is None else []:
        if (shown := under.get(d["key"], d["key"])) != d["key"] and shown in causes:
            causes[shown].checks = [*causes[shown].checks, *d["checks"]]
    view.causes = list(causes.values())
    for i, check in enumerate(ex.checks):
        c = _check_view(anchor, i, check)
        own = cause_key(check)
        cause = causes.get(under.get(own, own)) if own else None
        if cause is not None and cause.first is None:
            cause.first = c
            continue
        if cause is not None:
            c.note = "the same cause" if under.get(own, own) == own else "follows from this cause"
            cause.rest.append(c)
            continue
        if c.passed:
            view.passed.append(c)
        elif problem is not None or c.unrun:
            view.unrun.append(c)
        elif is_not_done(check):
            view.unfinished.append(c)
        elif any(f.message.text == c.message.text for f in view.failed):
            view.repeats.append(c)
        else:
            view.failed.append(c)
    return view


def is_flat_mapping(value: Any) -> bool:
    """A non-empty dict of short values: shown as a row of ``key = value`` chips."""
    return (
        isinstance(value, dict)
        and bool(value)
        and all(
            not isinstance(v, dict) and len(t := value_text(v)) <= LONG_VALUE and "\n" not in t
            for v in value.values()
        )
    )


def _percent(score: float, max_score: float) -> float:
    return round(100.0 * score / max_score, 1) if max_score else 0.0


def context(result: GradeResult, generated: datetime | None = None) -> dict:
    """What the template shows, computed here so that the template only lays it out."""
    checks = [c for ex in result.exercises for c in ex.checks]
    generated = generated or datetime.now().astimezone()
    return {
        "result": result,
        "score": points(result.score),
        "max_score": points(result.max_score),
        "percent": _percent(result.score, result.max_score),
        "percent_text": f"{percent(result.score, result.max_score)}%",
        "all_passed": result.all_passed,
        "exercises": [_exercise_view(ex) for ex in result.exercises],
        "exercises_passed": count_of(
            sum(ex.status == "passed" for ex in result.exercises), len(result.exercises), "exercise"
        ),
        "checks_passed": count_of(sum(c.passed for c in checks), len(checks), "check"),
        "generated": generated.strftime("%Y-%m-%d %H:%M %Z").strip(),
        "generated_iso": generated.isoformat(timespec="seconds"),
        "long_value": LONG_VALUE,
    }


@functools.cache
def environment() -> jinja2.Environment:
    """The one template environment of every HTML output (report, notebook view, dashboard),
    made once per process: jinja2 compiles a template once per environment, and ``grade batch``
    renders a report per submission."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["py"] = value_text
    env.tests["flat_mapping"] = is_flat_mapping
    return env


def render_html(result: GradeResult, generated: datetime | None = None) -> str:
    """The report page as a string."""
    return environment().get_template(TEMPLATE).render(context(result, generated))


def write_html(result: GradeResult, path: Path) -> None:
    """Write the report page of ``result`` to ``path``."""
    Path(path).write_text(render_html(result), encoding="utf-8")
