"""JUnit XML for CI test reporters (GitLab, Jenkins, dorny/test-reporter and the like): one
``testsuite`` per exercise, one ``testcase`` per check with the student's file on it, and a
``failure`` (never ``error``, which some readers ignore) carrying the message, the example and
the snippet. Times are plain seconds; the grader does not time checks one by one, so only the
whole run has a time."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from grader.result.common import (
    check_text,
    clip,
    display_path,
    is_unrun,
    parse_message,
    points,
    read_source,
    source_line,
)
from grader.result.schema import GradeResult
from grader.shared.registry import BY_ID

# Characters XML 1.0 cannot hold at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_LIMIT = 500  # the failure's message attribute is a one-line summary


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot carry spelled out (``\\x1b``)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _failure_type(status: str, unrun: bool) -> str:
    if unrun:
        return "not-run"
    return {"failed": "wrong-result", "error": "student-code-error"}.get(status, status)


def tree(result: GradeResult, root: Path | None = None) -> ET.Element:
    """The ``testsuites`` element of ``result``; ``root`` is the submission folder (for lines)."""
    checks = [c for ex in result.exercises for c in ex.checks]
    top = ET.Element(
        "testsuites",
        name=xml_text(f"grade {result.submission}"),
        tests=str(len(checks)),
        failures=str(sum(not c.passed for c in checks)),
        errors="0",
        skipped="0",
        time=f"{result.duration_s:.3f}",
    )
    for ex in result.exercises:
        suite = ET.SubElement(
            top,
            "testsuite",
            name=xml_text(f"{ex.id} {ex.title}"),
            tests=str(len(ex.checks)),
            failures=str(sum(not c.passed for c in ex.checks)),
            errors="0",
            skipped="0",
            time="0",
        )
        props = ET.SubElement(suite, "properties")
        for name, value in (
            ("score", points(ex.score)),
            ("max_score", points(ex.max_score)),
            ("status", ex.status),
        ):
            ET.SubElement(props, "property", name=name, value=value)
        source = read_source(root, ex.id)
        classname = "exercises." + BY_ID[ex.id].filename.removesuffix(".py")
        for check in ex.checks:
            case = ET.SubElement(
                suite,
                "testcase",
                name=xml_text(check.name),
                classname=classname,
                file=display_path(root, ex.id),
                time="0",
            )
            line = None if check.passed else source_line(ex.id, check, source)
            if line is not None:
                case.set("line", str(line))
            if not check.passed:
                summary = parse_message(check.message).text.replace("\n", " ")
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=xml_text(clip(summary, MESSAGE_LIMIT)),
                    type=_failure_type(ex.status, is_unrun(check)),
                )
                failure.text = xml_text(check_text(check))
            out = ET.SubElement(case, "system-out")
            out.text = f"points: {points(check.points)}/{points(check.max_points)}"
    return top


def render(result: GradeResult, root: Path | None = None) -> str:
    element = tree(result, root)
    ET.indent(element)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(element, "unicode") + "\n"


def emit(result: GradeResult, stream: TextIO, root: Path | None = None) -> None:
    stream.write(render(result, root))
