"""The terminal report: a table of the exercises with score bars, then what failed, then a
summary line.

Kept to about a screenful for a typical failing submission: each exercise's first failure in
full (message, expected/got, counterexample, hint), its other failures in a few lines, what is
not done yet once, and the snippet that reproduces the first failure; ``verbose`` adds every
failure's details and snippets. Messages are wrapped to the width, never cut at it (what is
not done yet says what to write in which file). The footer names the command that shows what
was left out. Colour only on a terminal, never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from typing import TextIO

from grader.result.common import (
    STATUS_LABEL,
    cause_key,
    clip,
    count_of,
    example_text,
    is_not_done,
    is_unrun,
    labelled,
    not_done,
    parse_message,
    percent,
    plural,
    points,
    shared_problem,
    shown_under,
    status_label,
    visible,
    without_cause,
)
from grader.result.schema import CheckResult, ExerciseResult, GradeResult

# SGR colour codes per status; foreground colours that read on dark and light terminals.
STATUS_COLOUR = {
    "passed": "32",
    "failed": "31",
    "error": "35",
    "timeout": "33",
    "missing": "2",
}
ICONS = {"passed": "✓", "failed": "✗", "error": "!", "timeout": "⏱", "missing": "-"}
ASCII_ICONS = {"passed": "+", "failed": "x", "error": "!", "timeout": "T", "missing": "-"}
BAR_WIDTH = 10
MAX_WIDTH = 100
BRIEF_LINES = 3  # lines of message shown for the further failures of an exercise
EXAMPLE_CHARS = 600  # of a counterexample shown without -v
SNIPPET_LINES = 20  # the first failure's snippet is shown without -v up to this length
MESSAGE_LINES = 8  # lines of a first failure's message shown without -v
SAME = "  (fails the same way)"
SAME_CAUSE = "  (the same cause)"
FOLLOWS = "  (follows from this cause)"


def visible_len(text: str) -> int:
    """The length of ``text`` on screen (colour codes take no room)."""
    return len(re.sub(r"\x1b\[[0-9;]*m", "", text))


def use_colour(stream: TextIO) -> bool:
    """Colour on a terminal, never with ``NO_COLOR`` (https://no-color.org) or ``TERM=dumb``;
    on Windows only on a console that reads colour codes (Windows Terminal, or the legacy
    console once its VT mode is on: ``ansi_console``)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if not getattr(stream, "isatty", lambda: False)():
        return False
    return os.name != "nt" or ansi_console(stream)


def ansi_console(stream: TextIO) -> bool:
    """Windows: whether the console behind ``stream`` reads colour and cursor codes, turning
    its VT mode on where it can (Windows 10 and later); False on an older console or when the
    stream is no console at all. Elsewhere a terminal always reads them."""
    if os.name != "nt":
        return True
    try:
        import ctypes
        import msvcrt

        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined]  # Windows only
        handle = msvcrt.get_osfhandle(stream.fileno())  # type: ignore[attr-defined]
        mode = ctypes.c_uint32()
        if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
            return False
        return bool(mode.value & VT_MODE or kernel32.SetConsoleMode(handle, mode.value | VT_MODE))
    except (ImportError, AttributeError, OSError, ValueError):
        return False


VT_MODE = 0x0004  # ENABLE_VIRTUAL_TERMINAL_PROCESSING, a console output mode


def use_unicode(stream: TextIO) -> bool:
    """Whether the stream can print the bar and tick characters."""
    try:
        "█░✓✗⏱·".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def width_of(stream: TextIO) -> int:
    if getattr(stream, "isatty", lambda: False)():
        return max(60, min(MAX_WIDTH, shutil.get_terminal_size().columns))
    return MAX_WIDTH


class _Style:
    def __init__(self, colour: bool, unicode: bool, width: int, command: str = "grade"):
        self.colour, self.unicode, self.width = colour, unicode, width
        self.command = command  # what runs this grade again (path, seed): for the footer
        self.icons = ICONS if unicode else ASCII_ICONS
        self.dot = "·" if unicode else "-"
        self.rule = "─" if unicode else "-"
        self.ellipsis = "…" if unicode else "..."
        self.snippet_due = True  # the first failure's snippet is shown even without -v
        self.hidden: list[str] = []  # exercises with details shown only with -v

    def hide(self, exercise_id: str) -> None:
        """Note that some detail of ``exercise_id`` was left out (``-e ID -v`` shows it)."""
        if exercise_id not in self.hidden:
            self.hidden.append(exercise_id)

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def status(self, status: str, label: str | None = None) -> str:
        text = f"{self.icons[status]} {label or STATUS_LABEL[status]}"
        return self.paint(text, STATUS_COLOUR[status])

    def bar(self, score: float, max_score: float) -> str:
        share = score / max_score if max_score else 0.0
        if not self.unicode:
            full = round(share * BAR_WIDTH)
            return "#" * full + "." * (BAR_WIDTH - full)
        eighths = round(share * BAR_WIDTH * 8)
        full, part = divmod(eighths, 8)
        partial = " ▏▎▍▌▋▊▉"[part].strip() if part else ""
        return ("█" * full + partial).ljust(BAR_WIDTH, "░")

    def wrap(self, text: str, indent: int, first: str = "") -> list[str]:
        """``text`` wrapped to the width under ``indent`` spaces, ``first`` before line one."""
        pad = " " * indent
        out: list[str] = []
        for i, para in enumerate(text.splitlines() or [""]):
            lead = pad + (first if i == 0 else " " * len(first))
            rest = pad + " " * len(first)
            out += textwrap.wrap(
                para,
                self.width,
                initial_indent=lead,
                subsequent_indent=rest,
                break_on_hyphens=False,
                break_long_words=True,
            ) or [lead.rstrip()]
        return out


def _table(result: GradeResult, st: _Style) -> list[str]:
    exs = result.exercises
    title_w = min(max((len(e.title) for e in exs), default=0), 46)
    score_w = max((len(points(e.score)) for e in exs), default=1)
    max_w = max((len(points(e.max_score)) for e in exs), default=1)
    lines = []
    for ex in exs:
        ellipsis = "…" if st.unicode else "..."
        title = (
            ex.title if len(ex.title) <= title_w else ex.title[: title_w - len(ellipsis)] + ellipsis
        )
        score = f"{points(ex.score):>{score_w}} / {points(ex.max_score):<{max_w}}"
        bar = st.paint(st.bar(ex.score, ex.max_score), STATUS_COLOUR[ex.status])
        status = st.status(ex.status, status_label(ex))
        lines.append(f"  {ex.id}  {title:<{title_w}}  {score}  {bar}  {status}")
    return lines


def _brief(body: list[str], st: _Style) -> list[str]:
    """At most ``BRIEF_LINES`` of a wrapped message, the last cut with an ellipsis."""
    if len(body) <= BRIEF_LINES:
        return body
    return [
        *body[: BRIEF_LINES - 1],
        body[BRIEF_LINES - 1][: st.width - len(st.ellipsis)].rstrip() + st.ellipsis,
    ]


def _check_lines(
    ex_id: str, check: CheckResult, full: bool, verbose: bool, st: _Style, pts_w: int
) -> list[str]:
    lines = _check_head(check, st, pts_w)
    msg = without_cause(check, parse_message(visible(clip(check.message))))
    if not full:
        body = _brief(st.wrap(msg.text, 6), st)
        if msg.expected or msg.hint or check.counterexample is not None or check.reproduce:
            st.hide(ex_id)
        return lines + body
    lines += _body(ex_id, msg.text, 6, verbose, st) if msg.text else []
    if msg.expected or msg.got:
        lines += ["      " + labelled("Expected: ", msg.expected).replace("\n", "\n      ")]
        lines += ["      " + labelled("Got:      ", msg.got).replace("\n", "\n      ")]
    if check.counterexample is not None:
        example = visible(example_text(check.counterexample))
        if not verbose and len(example) > EXAMPLE_CHARS:
            example = clip(example, EXAMPLE_CHARS)
            st.hide(ex_id)
        lines += st.wrap(example, 6, "Counterexample: ")
    if msg.hint:
        lines += [st.paint(line, "36") for line in st.wrap(msg.hint, 6, "Hint: ")]
    if msg.printed:
        lines.append("      Your code printed (last lines):")
        lines += ["        " + line for line in msg.printed.splitlines()]
    if check.reproduce and (verbose or st.snippet_due):
        snippet = check.reproduce.rstrip().splitlines()
        if verbose or len(snippet) <= SNIPPET_LINES:
            lines.append("      Reproduce it (paste into Python in your clone):")
            lines += [("        " + line).rstrip() for line in snippet]
        else:
            lines.append(
                f"      Reproduce it: {_rerun(st, ex_id)} prints a {len(snippet)}-line snippet"
            )
            st.hide(ex_id)
        st.snippet_due = False
    elif check.reproduce:
        st.hide(ex_id)
    return lines


def _rerun(st: _Style, exercise_id: str) -> str:
    """The command that shows one exercise in full: ``grade [PATH] -e ID -v``."""
    return f"{st.command} -e {exercise_id} -v"


def _body(ex_id: str, text: str, indent: int, verbose: bool, st: _Style) -> list[str]:
    """A message wrapped under ``indent``, cut to a few lines unless ``verbose``."""
    lines = st.wrap(text, indent)
    if len(lines) > MESSAGE_LINES and not verbose:
        more = len(lines) - MESSAGE_LINES
        lines = [*lines[:MESSAGE_LINES], " " * indent + f"… ({more} more lines with -v)"]
        st.hide(ex_id)
    return lines


def _check_head(check: CheckResult, st: _Style, pts_w: int) -> list[str]:
    """``  x  0/2.5  name``: the points in a column, the name wrapped under itself."""
    pts = f"{points(check.points)}/{points(check.max_points)}".rjust(pts_w)
    icon = st.paint(st.icons["failed"], STATUS_COLOUR["failed"])
    lines = st.wrap(check.name, 5 + pts_w + 2)
    lines[0] = f"  {icon}  {pts}  " + lines[0].lstrip()
    return lines


def _exercise_lines(ex: ExerciseResult, verbose: bool, st: _Style) -> list[str]:
    title = f" {ex.id} {ex.title}  ({points(ex.score)}/{points(ex.max_score)}) "
    rule = st.rule * 2 + title + st.rule * max(2, st.width - len(title) - 2)
    lines = [st.paint(rule, "1")]
    unfinished = not_done(ex)
    problem = shared_problem(ex)
    if problem is not None and unfinished is None:  # a missing file, a failed import: once
        msg = parse_message(visible(clip(problem)))
        lines += _body(ex.id, msg.text, 2, verbose, st)
        if msg.hint:
            lines += st.wrap(msg.hint, 2, "Hint: ")
        return lines
    failed = [c for c in ex.checks if not c.passed]
    unrun = [c for c in failed if is_unrun(c)]
    shown = [c for c in failed if not is_unrun(c) and not is_not_done(c)]
    pts_w = max((len(f"{points(c.points)}/{points(c.max_points)}") for c in shown), default=0)
    lines += _cause_lines(ex, shown, verbose, st, pts_w)
    uncaused = [c for c in shown if not c.cause]
    seen: set[str] = set()
    for i, check in enumerate(uncaused):
        text = parse_message(visible(check.message)).text
        if text in seen and not verbose:
            lines += _noted_head(check, SAME, st, pts_w)
            if check.counterexample is not None or check.reproduce:
                st.hide(ex.id)
            continue
        seen.add(text)
        first = i == 0 and len(uncaused) == len(shown)
        lines += _check_lines(ex.id, check, verbose or first, verbose, st, pts_w)
    if unfinished is not None:  # unwritten answers: said once, with or without -v
        text, n = unfinished
        lead = f"{plural(n, 'more check')} " if shown else ""
        lines += st.wrap(lead + visible(text), 2)  # wrapped: it says what to write where
    if unrun:
        reason = unrun[0].message[len("not run:") :].strip()
        lines += st.wrap(f"{plural(len(unrun), 'more check')} not run: {reason}", 2)
    return lines


def _cause_lines(
    ex: ExerciseResult, shown: list[CheckResult], verbose: bool, st: _Style, pts_w: int
) -> list[str]:
    """Each cause of the exercise's failures once, root cause first: the cause with its
    evidence, its hint, then the checks it breaks (the first of all in full), with those of the
    causes that follow from it (``shown_under``), which are not said apart."""
    lines: list[str] = []
    under = shown_under(ex)
    for n, entry in enumerate(ex.diagnosis):
        if under.get(entry["key"], entry["key"]) != entry["key"]:
            continue
        members = [c for c in shown if under.get(cause_key(c)) == entry["key"]]
        if not members:
            continue
        lines += [st.paint(line, "1") for line in st.wrap(visible(entry["cause"]), 2, "Cause: ")]
        if entry["hint"]:
            lines += [st.paint(line, "36") for line in st.wrap(visible(entry["hint"]), 2, "Hint: ")]
        lines.append(f"  It breaks {plural(len(members), 'check')}:")
        for i, check in enumerate(members):
            if i == 0 and (n == 0 or verbose):
                lines += _check_lines(ex.id, check, True, verbose, st, pts_w)
                continue
            if cause_key(check) != entry["key"]:
                lines += _follower_lines(ex.id, check, verbose, st, pts_w)
                continue
            rest = without_cause(check, parse_message(visible(check.message))).text
            if not rest.strip() or not verbose:
                lines += _noted_head(check, SAME_CAUSE, st, pts_w)
                st.hide(ex.id)
            else:
                lines += _check_lines(ex.id, check, True, verbose, st, pts_w)
    return lines


def _noted_head(check: CheckResult, note: str, st: _Style, pts_w: int) -> list[str]:
    """A check's head with ``note`` after its name, or on a line of its own."""
    head = _check_head(check, st, pts_w)
    if visible_len(head[-1]) + len(note) <= st.width:
        head[-1] += note
    else:
        head.append(" " * 6 + note.strip())
    return head


def _follower_lines(ex_id: str, check: CheckResult, verbose: bool, st: _Style, w: int) -> list[str]:
    """A check whose cause follows from the cause above it: its head and what it found (its
    own cause is not said apart), in full with ``-v``."""
    body = st.wrap(parse_message(visible(clip(check.message))).text, 6)
    if not verbose:
        st.hide(ex_id)
        body = _brief(body, st)
    return _noted_head(check, FOLLOWS, st, w) + body


def _summary(result: GradeResult, st: _Style) -> str:
    checks = [c for ex in result.exercises for c in ex.checks]
    n_passed = sum(ex.status == "passed" for ex in result.exercises)
    share = f" ({percent(result.score, result.max_score)}%)" if result.max_score else ""
    total = f"Score: {points(result.score)}/{points(result.max_score)}{share}"
    exercises = count_of(n_passed, len(result.exercises), "exercise")
    passed = count_of(sum(c.passed for c in checks), len(checks), "check")
    return (
        f"{st.paint(total, '1;32' if result.all_passed else '1')}  {st.dot}  {exercises} passed"
        f"  {st.dot}  {passed} passed  {st.dot}  {result.duration_s:.1f} s"
    )


def _header(result: GradeResult, st: _Style) -> str:
    name = st.paint(visible(result.submission), "1")
    return (
        f"Grading {name}  {st.dot}  {result.seed_text}  {st.dot}  "
        f"grader {result.grader_version}  {st.dot}  torch {result.torch_version}"
    )


def overview(result: GradeResult, unicode: bool = True, width: int = MAX_WIDTH) -> str:
    """The header, the table of exercises and the summary line, without colour."""
    st = _Style(False, unicode, width)
    return "\n".join([_header(result, st), "", *_table(result, st), "", _summary(result, st)])


def render(
    result: GradeResult,
    colour: bool = False,
    verbose: bool = False,
    unicode: bool = True,
    width: int = MAX_WIDTH,
    command: str = "grade",
) -> str:
    """The whole terminal report; ``command`` runs the same grade again (``grade PATH``, with
    ``--seed`` when not the default), for the footer's suggestions."""
    st = _Style(colour, unicode, width, command)
    lines = [_header(result, st), "", *_table(result, st)]
    failing = [ex for ex in result.exercises if ex.status != "passed"]
    if failing:
        lines.append("")
    for ex in failing:
        lines += _exercise_lines(ex, verbose, st)
    lines += ["", _summary(result, st)]
    if st.hidden and not verbose:
        first = st.hidden[0]
        lines.append(
            f"More: {_rerun(st, first)} (all of {first}, with snippets)  {st.dot}  "
            f"{command} --html FILE"
        )
    return "\n".join(lines) + "\n"


def write(
    result: GradeResult,
    stream: TextIO = sys.stdout,
    verbose: bool = False,
    command: str = "grade",
) -> None:
    """The report on ``stream``, coloured and drawn as that stream allows."""
    unicode = use_unicode(stream)
    text = render(
        result,
        colour=use_colour(stream),
        verbose=verbose,
        unicode=unicode,
        width=width_of(stream),
        command=command,
    )
    if not unicode:  # what the stream cannot encode (a student's text may hold anything)
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            text = text.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            text = text.encode("ascii", "backslashreplace").decode("ascii")
    stream.write(text)
