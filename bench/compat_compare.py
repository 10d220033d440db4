"""How two runs of bench/compat.py's work set are compared: what decides a grade (the
verdicts), what is the grader's own text, and which differences come from the environment
rather than the grader (torch's exception messages, another hypothesis release's shrinking).
"""

from __future__ import annotations

import operator
import re

IGNORED = ("duration_s", "torch_version")


def verdicts(result: dict) -> list:
    """What decides a grade: the score, each exercise's status and each check's outcome."""
    return [
        result.get("score"),
        result.get("error"),
        [
            (
                e["id"],
                e["status"],
                e["score"],
                [(c["name"], c["passed"], c["points"]) for c in e["checks"]],
            )
            for e in result.get("exercises", [])
        ],
    ]


def comparable(value):
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in IGNORED}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


# The words of an exception the answer raised, after "raised <Type>: ", up to where it was
# raised (" (in <file>, line N, ...") or the end of the line: torch's own message (or the
# student's), which torch releases word differently; the grader's words around it are ours.
QUOTED = re.compile(r"(raised [A-Za-z_][\w.]*: ).*?(?= \((?:raised )?in [^\n]*?, line \d+|$)", re.M)


def masked(value):
    """``value`` with the words of every exception the answer raised left out."""
    if isinstance(value, str):
        return QUOTED.sub(r"\1<its message>", value)
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def same_examples_only(a: dict, b: dict) -> tuple[dict, dict]:
    """Two results (masked) less every check whose counterexample differs between them, and
    less the diagnosis of an exercise that has such a check: what another hypothesis release
    (which draws and shrinks other examples) may change."""
    a, b = masked(a), masked(b)
    for ea, eb in zip(a.get("exercises", []), b.get("exercises", []), strict=False):
        pairs = list(zip(ea.get("checks", []), eb.get("checks", []), strict=False))
        kept = [(x, y) for x, y in pairs if x.get("counterexample") == y.get("counterexample")]
        if len(kept) < len(pairs):
            ea["checks"], eb["checks"] = [x for x, _ in kept], [y for _, y in kept]
            ea.pop("diagnosis", None)
            eb.pop("diagnosis", None)
    return a, b


def differences(reference: dict, other: dict, other_examples: bool = False) -> tuple[list, ...]:
    """(verdicts that differ, and what grade printed that the reference did not; results whose
    text differs in the grader's words; results whose text differs only in the words of an
    exception the answer raised, torch's; and, where ``other_examples`` (another hypothesis
    release), results whose text differs only in checks that show another counterexample)."""
    ref, got = reference["results"], other["results"]
    out = [f"{name}: missing" for name in ref if name not in got]
    out += [f"{name}: not in the reference" for name in got if name not in ref]
    text, quoted, shrunk = [], [], []
    for name in ref:
        if name not in got:
            continue
        a, b = comparable(ref[name]), comparable(got[name])
        if verdicts(a) != verdicts(b):
            out.append(f"{name}: {first_difference(verdicts(a), verdicts(b))}")
        elif masked(a) == masked(b):
            if a != b:
                quoted.append(f"{name}: {first_difference(a, b)}")
        elif other_examples and operator.eq(*same_examples_only(a, b)):
            shrunk.append(f"{name}: {first_difference(a, b)}")
        else:
            text.append(f"{name}: {first_difference(a, b)}")
    for name, said in other["stderr"].items():
        extra = set(said.splitlines()) - set(reference["stderr"].get(name, "").splitlines())
        if extra:
            out.append(f"{name}: printed {sorted(extra)[0][:200]!r}")
    return out, text, quoted, shrunk


def first_difference(a, b, where: str = "") -> str:
    if type(a) is not type(b):
        return f"{where or 'result'}: {str(a)[:120]!r} != {str(b)[:120]!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    if isinstance(a, str) and isinstance(b, str):
        at = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        a, b = a[max(0, at - 40) : at + 80], b[max(0, at - 40) : at + 80]
    return f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"
