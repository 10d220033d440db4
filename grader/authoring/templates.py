"""The text of the files ``grade new-exercise`` writes (``grader.authoring.scaffold`` fills
them): a worked example, a running sum of a 1-D tensor, with the places an author writes their
own exercise marked ``TODO(pack):``. In a template, ``<<key>>`` is replaced and nothing else.
"""

from __future__ import annotations

import re

STUB = '''"""Exercise <<id>>: <<title>>.

TODO(pack): the statement, as students read it: what to write, for which inputs, and what is
graded. Below, a worked example to replace (a running sum).

Your task: write ``<<function>>(x)``. Given a 1-D float tensor ``x``, return the tensor of its
running sums, ``y[i] = x[0] + x[1] + ... + x[i]``, with the shape and dtype of ``x``.

What is graded: the values, for any 1-D tensor of any length; ``x`` itself is left unchanged.

Hint: PyTorch has a function for it; a loop that keeps a total works too.
"""


# TODO(pack): the function(s) the student writes, with the statement's signature; each raises
# NotImplementedError until it is written (the grader then says "not done yet", not "wrong").
def <<function>>(x):
    """The running sums of the 1-D tensor ``x``."""
    raise NotImplementedError(
        "<<not_done>>"
        "<<not_done_where>>"
    )
'''

SOLUTION = '''"""Exercise <<id>>: <<title>> (the solution: students never see it)."""

import torch


# TODO(pack): the solution, with the stub's signature.
def <<function>>(x):
    return torch.cumsum(x, dim=0)
'''

CHECKS = '''"""Checks for exercise <<id>>: <<title>>.

Judge side: the examples, the reference answer and every comparison live here. The student's
code runs only in the worker (the probes of ``<<probes_module>>``), which sends back plain data.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.pack.judge import Check, CheckFailed, assert_close, returned


# TODO(pack): the examples the property is checked on: a hypothesis strategy of plain data
# (small sizes find the same mistakes faster, and hypothesis shrinks a failure to a small one).
def examples() -> st.SearchStrategy[dict]:
    values = st.floats(min_value=-10, max_value=10, allow_nan=False, width=32)
    return st.fixed_dictionaries({"x": st.lists(values, min_size=1, max_size=8)})


# TODO(pack): the reference answer, computed here in the judge, never by the student's code.
def expected(ex: dict) -> torch.Tensor:
    return torch.cumsum(torch.tensor(ex["x"]), dim=0)


# TODO(pack): ask the worker (a probe of <<probes_module>>) and compare. CheckFailed says what
# is wrong in plain words; its kind (grader.pack.judge: VALUES, SHAPE, returned(...)) chooses
# the hint shown.
def check_values(worker, ex: dict) -> None:
    got = worker.call("call", x=torch.tensor(ex["x"]))
    if not isinstance(got, torch.Tensor):
        kind = returned(type(got).__name__)
        raise CheckFailed(f"<<function>>(x) returned a {type(got).__name__}, not a tensor", kind)
    assert_close(got, expected(ex), f"<<function>>(x) for x = {ex['x']}")


# TODO(pack): the snippet a student pastes in their clone to see the failure (the grader points
# its "from exercises..." line at the file it graded).
def reproduce(ex: dict) -> str:
    return f"""\\
import torch
from exercises.<<stem>> import <<function>>

x = torch.tensor({ex["x"]!r})
print("<<function>>(x) =", <<function>>(x))
print("expected:      ", torch.cumsum(x, dim=0))
"""


# TODO(pack): the checks: a name a student understands, points (scaled to the exercise's), and
# a hint for when the answer is wrong.
CHECKS = [
    Check(
        name="<<function>>(x) returns the running sums of x, for any 1-D tensor",
        points=10,
        strategy=examples(),
        run=check_values,
        hint="y[i] is the sum of x[0] ... x[i], the last one included: torch.cumsum(x, dim=0) "
        "computes it.",
        reproduce=reproduce,
    ),
]
'''

PROBES_HEAD = '''"""The worker side of the pack <<pack_name>>: what a worker does with a
student's module, one table of probes per exercise (named in pack.toml). Probes use torch and
the grader's public face for probes (``grader.pack.worker``), never the judge or hypothesis,
and judge nothing."""

from __future__ import annotations

from grader.pack.worker import <<probe_helper>>
'''

PROBE = """

# --- exercise <<id>>: <<title>>
<<import>>

# TODO(pack): what the worker does with the student's module: call what the student wrote with
# the judge's inputs and send back plain data (``plain`` refuses anything else, in the
# student's words).
def _<<module>>_call(module, state, x):
    return plain(module.<<function>>(x), "<<function>> returned")


<<table>> = {"call": _<<module>>_call}
"""

SIMPLE_CHECKS = '''"""Exercise <<id>>: <<title>>. Declared (judge side): the student's function,
run in the worker (``<<probes_module>>:<<table>>``), against a reference within a tolerance."""

import torch
from hypothesis import strategies as st

from grader.pack.judge import same_as_reference


# TODO(pack): the reference answer, computed here in the judge (never by the student's code),
# with the answer's own signature: the check calls it as it calls the student's function.
def running_sums(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x, dim=0)


# TODO(pack): a strategy for each of the answer's arguments, in the answer's order: plain data
# or tensors (hypothesis shrinks a failure toward the simplest values: make them the easiest
# case to read; the snippet writes a tensor as a torch.tensor(...) literal).
def vectors() -> st.SearchStrategy[torch.Tensor]:
    values = st.floats(min_value=-10, max_value=10, allow_nan=False, width=32)
    return st.lists(values, min_size=1, max_size=8).map(torch.tensor)


# TODO(pack): the check: a name a student understands, a hint, and the tolerance (rtol, atol:
# |got - expected| <= atol + rtol * |expected|). It checks the exercise's one answer
# (<<stem>>.<<function>>; answer="<<stem>>:<name>" for another), and weighs 1 (points=: its
# share of the exercise's points, beside the other checks of CHECKS).
CHECKS = [
    same_as_reference(
        name="<<function>>(x) returns the running sums of x, for any 1-D tensor",
        strategy={"x": vectors()},
        reference=running_sums,
        hint="y[i] is the sum of x[0] ... x[i], the last one included: torch.cumsum(x, dim=0) "
        "computes it.",
        rtol=1e-4,
        atol=1e-5,
    )
]
'''

SIMPLE_PROBE = """

# --- exercise <<id>>: <<title>>
<<import>>

# TODO(pack): the worker calls the student's function with the judge's arguments; give
# ``build={"name": function}`` for an argument sent as plain data that must be rebuilt here.
<<table>> = answer_probes("<<function>>")
"""

WRONG = '''"""TODO(pack): a wrong answer students write, and why it is wrong; name the file after it
(wrong_<what it does>.py). Here: the total, not the running sums."""

import torch


# TODO(pack): the wrong answer, and below, part of the name of each check it must fail (the
# corpus's headers: expect-failing, expect-hint, expect-no-hint; docs/writing-an-exercise.md,
# "The corpus").
# expect-failing: <<check_name>>
def <<function>>(x):
    return x.sum() * torch.ones_like(x)
'''

CORRECT = '''"""TODO(pack): a right answer written otherwise than the solution (a loop,
another library call, a copy of shared code): the checks must not fail it. Here: a loop that
keeps a total."""

import torch


# TODO(pack): the unusual right answer.
def <<function>>(x):
    out = torch.empty_like(x)
    total = 0.0
    for i in range(len(x)):
        total = total + x[i]
        out[i] = total
    return out
'''

TEST = '''"""Exercise <<id>> (<<title>>) of the pack <<pack_name>>: ``grade check-pack`` proves it
(its solution gets full marks, its stub reads "not done yet", its corpus gets what it must),
and its checks have points and hints."""

import subprocess
import sys
from pathlib import Path

PACK = (Path(__file__).resolve().parent / <<pack_from_test>>).resolve()


def test_check_pack_proves_the_exercise():
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "check-pack", str(PACK), "-e", <<id_literal>>]
        + ["--mutants", "0"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_checks_have_points_and_hints():
    sys.path.insert(0, str(PACK.parent))
    from <<checks_module>> import CHECKS

    assert CHECKS and all(c.points > 0 and c.hint and c.reproduce for c in CHECKS)
'''

PACK_HEAD = """# The exercise pack <<pack_name>> (grade new-exercise wrote it). Paths are
# relative to this file; the solution and the corpus lie outside the package, which every
# worker may read.
[pack]
name = <<pack_name_literal>>
title = <<pack_title_literal>>
# imported by the fork server before it forks: every worker has them loaded
worker = [<<probes_literal>>]
# packages whose code every answer may share (left out of the similarity of two answers)
shared = []
stubs = "<<stubs>>"
solution = "<<solution>>"
corpus = "<<corpus>>"
"""

EXERCISE = """
[[exercise]]
id = <<id_literal>>
file = "<<filename>>"
title = <<title_literal>>
names = ["<<function>>"]
points = <<points>>
checks = "<<checks_module>>:CHECKS"
probes = "<<probes_module>>:<<table>>"
"""

CHECK_NAME = "<<function>>(x) returns the running sums of x, for any 1-D tensor"


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"<<{key}>>", value)
    left = re.findall(r"<<\w+>>", template)
    if left:  # a template and its values disagree: a bug of ours
        raise AssertionError(f"unfilled template keys: {left}")
    return template
