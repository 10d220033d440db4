"""The terminal report: a table of the exercises with score bars, then what failed, then a
summary line.

Kept to about a screenful for a typical failing submission: each exercise's first failure in
full (message, expected/got, counterexample, hint), its other failures on a line or two, and
the snippet that reproduces the first failure; ``verbose`` adds every failure's details and
snippets. Colour only on a terminal, never when ``NO_COLOR`` is set.
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
    clip,
    example_text,
    is_unrun,
    labelled,
    parse_message,
    percent,
    points,
    shared_problem,
    status_label,
    visible,
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
BRIEF_LINES = 1  # lines of message shown for the further failures of an exercise
EXAMPLE_CHARS = 600  # of a counterexample shown without -v
SNIPPET_LINES = 20  # the first failure's snippet is shown without -v up to this length
MESSAGE_LINES = 8  # lines of a first failure's message shown without -v
SAME = "  (fails the same way)"
NOT_DONE = "not done yet"


def visible_len(text: str) -> int:
    """The length of ``text`` on screen (colour codes take no room)."""
    return len(re.sub(r"\x1b\[[0-9;]*m", "", text))


def use_colour(stream: TextIO) -> bool:
    """Colour on a terminal, never with ``NO_COLOR`` (https://no-color.org) or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


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
    def __init__(self, colour: bool, unicode: bool, width: int):
        self.colour, self.unicode, self.width = colour, unicode, width
        self.icons = ICONS if unicode else ASCII_ICONS
        self.dot = "·" if unicode else "-"
        self.rule = "─" if unicode else "-"
        self.snippet_due = True  # the first failure's snippet is shown even without -v

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
                para, self.width, initial_indent=lead, subsequent_indent=rest,
                break_on_hyphens=False, break_long_words=True,
            ) or [lead.rstrip()]  # fmt: skip
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


def _check_lines(
    ex_id: str, check: CheckResult, full: bool, verbose: bool, st: _Style, pts_w: int
) -> list[str]:
    lines = _check_head(check, st, pts_w)
    msg = parse_message(visible(clip(check.message)))
    if not full:
        body = st.wrap(msg.text, 6)
        if len(body) > BRIEF_LINES:
            body = body[:BRIEF_LINES]
            body[-1] = body[-1][: st.width - 1].rstrip() + "…"
        return lines + body
    lines += _body(msg.text, 6, verbose, st)
    if msg.text.startswith(NOT_DONE) and not verbose:  # a stub: nothing to explain yet
        return lines
    if msg.expected or msg.got:
        lines += ["      " + labelled("Expected: ", msg.expected).replace("\n", "\n      ")]
        lines += ["      " + labelled("Got:      ", msg.got).replace("\n", "\n      ")]
    if check.counterexample is not None:
        example = visible(example_text(check.counterexample))
        lines += st.wrap(
            example if verbose else clip(example, EXAMPLE_CHARS), 6, "Counterexample: "
        )
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
                f"      Reproduce it: grade -v -e {ex_id} prints a {len(snippet)}-line snippet"
            )
        st.snippet_due = False
    return lines


def _body(text: str, indent: int, verbose: bool, st: _Style) -> list[str]:
    """A message wrapped under ``indent``, cut to a few lines unless ``verbose``."""
    lines = st.wrap(text, indent)
    if len(lines) > MESSAGE_LINES and not verbose:
        more = len(lines) - MESSAGE_LINES
        lines = [*lines[:MESSAGE_LINES], " " * indent + f"… ({more} more lines with -v)"]
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
    problem = shared_problem(ex)
    if problem is not None:  # a missing file or an import that failed: say it once
        msg = parse_message(visible(clip(problem)))
        lines += _body(msg.text, 2, verbose, st)
        if msg.hint:
            lines += st.wrap(msg.hint, 2, "Hint: ")
        return lines
    failed = [c for c in ex.checks if not c.passed]
    unrun = [c for c in failed if is_unrun(c)]
    shown = [c for c in failed if not is_unrun(c)]
    pts_w = max((len(f"{points(c.points)}/{points(c.max_points)}") for c in shown), default=0)
    seen: set[str] = set()
    for i, check in enumerate(shown):
        text = parse_message(visible(check.message)).text
        if text.startswith(NOT_DONE):  # unfinished functions of one file: one reason
            text = NOT_DONE
        if text in seen and not verbose:
            head = _check_head(check, st, pts_w)
            if visible_len(head[-1]) + len(SAME) <= st.width:
                head[-1] += SAME
            else:
                head.append(" " * 6 + SAME.strip())
            lines += head
            continue
        seen.add(text)
        lines += _check_lines(ex.id, check, verbose or i == 0, verbose, st, pts_w)
    if unrun:
        reason = unrun[0].message[len("not run:") :].strip()
        lines += st.wrap(f"{len(unrun)} more check(s) not run: {reason}", 2)
    return lines


def _summary(result: GradeResult, st: _Style) -> str:
    checks = [c for ex in result.exercises for c in ex.checks]
    n_passed = sum(ex.status == "passed" for ex in result.exercises)
    share = f" ({percent(result.score, result.max_score)}%)" if result.max_score else ""
    total = f"Score: {points(result.score)}/{points(result.max_score)}{share}"
    return (
        f"{st.paint(total, '1;32' if result.all_passed else '1')}  {st.dot}  {n_passed} of "
        f"{len(result.exercises)} exercises passed  {st.dot}  {sum(c.passed for c in checks)} "
        f"of {len(checks)} checks passed  {st.dot}  {result.duration_s:.1f} s"
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
) -> str:
    """The whole terminal report."""
    st = _Style(colour, unicode, width)
    lines = [_header(result, st), "", *_table(result, st)]
    failing = [ex for ex in result.exercises if ex.status != "passed"]
    if failing:
        lines.append("")
    for ex in failing:
        lines += _exercise_lines(ex, verbose, st)
    lines += ["", _summary(result, st)]
    details_hidden = not verbose and any(
        not c.passed and (c.reproduce or c.counterexample is not None)
        for ex in result.exercises
        for c in ex.checks
    )
    if details_hidden:
        lines.append(
            "More: grade -v (every failure in full, with a snippet that reproduces it)  "
            f"{st.dot}  grade --html FILE"
        )
    return "\n".join(lines) + "\n"


def write(result: GradeResult, stream: TextIO = sys.stdout, verbose: bool = False) -> None:
    """The report on ``stream``, coloured and drawn as that stream allows."""
    unicode = use_unicode(stream)
    text = render(
        result,
        colour=use_colour(stream),
        verbose=verbose,
        unicode=unicode,
        width=width_of(stream),
    )
    if not unicode:  # what the stream cannot encode (a student's text may hold anything)
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            text = text.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            text = text.encode("ascii", "backslashreplace").decode("ascii")
    stream.write(text)
