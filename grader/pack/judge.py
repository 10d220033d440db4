"""The judge side of the public face: what a pack's checks, strategies and oracles import.

Checks:

- ``Check(name, points, strategy, run, hint, reproduce=None, counterexample=None,
  max_examples=20, examples=(), hint_kinds=OWN_KINDS, known=())``: one graded behaviour;
  ``run(worker, example)`` raises ``CheckFailed`` when the answer is wrong on ``example``.
  Checks run under ``torch.no_grad()``: a reference that needs gradients computes them inside
  ``with torch.enable_grad():``.
- ``CheckFailed(message, kind=WRONG, info=None, cause=None)``: the answer is wrong; ``kind``
  chooses the hint (below), ``cause`` names why (below).
- ``same_as_reference(name=, strategy=, reference=, hint=, answer=None, arguments=None,
  points=1.0, rtol=RTOL, atol=ATOL, ...)``: the declarative check of a function against a
  reference. Without ``answer``, the exercise's one name (pack.toml's ``names``); ``points``
  is the check's weight among the exercise's checks.
- ``same_module_as_reference(name=, answer=, strategy=, arguments=, reference=, inputs=,
  points=, hint=, weights=None, ...)``: the declarative check of a module: the one the
  student's class builds, loaded with the judge's weights, computes what the reference does
  (its probes: ``grader.pack.worker.module_probes``).
- ``redrawn(module, seed)``: the reference module with every weight drawn anew from a standard
  normal (a weight that starts at zero would hide a mistake): ``reference=lambda ex:
  redrawn(Oracle(...), ex["seed"])``.
- ``same_init_as_reference(name=, answer=, strategy=, arguments=, reference=, points=, hint=,
  seed=None, ...)``: the declarative check of a module's starting weights: built fresh, each
  weight starts as the reference's (the same constant values, or drawn from the same
  distribution).
- ``StudentError``: the student's code raised in the worker (``info``: its description);
  ``explain_student_error(info)``, ``is_stub(info)``.

Comparisons: ``assert_close(got, expected, what, rtol=RTOL, atol=ATOL)`` (``RTOL`` = 1e-4,
``ATOL`` = 1e-5), ``close`` (tensors, numbers, tuples, lists and dicts of them, plain data),
``expect_tensor``, ``filled_dict``, ``tensor_text``, ``pair_text``/``largest_text`` (where two
tensors differ most), ``literal`` (Python source of a value, for snippets). Localizing a
module's first difference: ``localized(worker, reply, reference, x, *, names=None, explain=None,
part_hints=None)``, a context manager around a comparison of a module exercise: when the
comparison fails, the worker traces the student's module (the pack's ``trace`` probe:
``grader.pack.worker.trace_kept``) and the first part whose output differs from the reference's
for the same input becomes the failure's cause (``LOCATED`` its kind); ``first_difference``,
``module_renames`` and ``Difference`` are its parts.

Generic diagnosis of module exercises (each names a cause from evidence; a pack words the rest):

- ``ModuleDescription``: the type of what a worker says of a module it built
  (``grader.pack.worker.describe_module``, ``reply["module"]``), a ``TypedDict`` whose every key
  may be missing (a worker's frame is checked before it is used).
- Names: ``under_student_names(weights, description)`` (a ``names`` for ``localized``): the
  reference's weights under the student's names when the student's module differs from the
  reference in names only (the same parameters, in order and shape); ``renamings(expected,
  shapes)``: what such a state_dict renames, said in general (``blocks.* as layers.*``), for the
  pack's message.
- Counts: ``count_parts`` (a module): ``parts(make, prefix="", repeated=())`` a reference
  module's parts and their sizes, built on the ``meta`` device (the items of the module lists
  named in ``repeated`` summed); ``explain(off, found)`` a count off by exactly one or two
  parts (``count:twice``, ``count:left-out``, ``count:mask``); ``scaled(off, found, cfg)`` a
  part counted a config value's number of times.
- Rebuilds: ``same_weights`` (a module): ``reused(kind, description, rebuild)`` the reference
  module rebuilt before from equal weights, ``expected(module, key, compute)`` its output for
  an input computed once.
- Sizes: ``too_big`` (a module): ``refusal(call, description, asked, margin)`` the message
  for a module the worker found over the bound (``grader.pack.worker.kept_within``),
  ``remember(worker, message)`` and ``refused(worker)`` so that it is built once per worker.
- Constructors: ``constructor_cause(worker, info, calls)``, ``constructors_explained(worker,
  calls)`` (a context manager) and ``extra_parameters(worker, name, args)``: a class whose
  ``__init__`` is misspelled (never called) or takes other parameters than the exercise's call
  (the pack's ``constructor`` probe: ``grader.pack.worker.constructor``).

Failure kinds, which choose the hint shown: ``NOT_DONE``, ``WRONG``, ``SHAPE``, ``VALUES``,
``COUNT``, ``STRUCTURE``, ``INCONSISTENT``, ``raised(info)`` (``raised:<Type>``),
``returned(type_name)`` (``type:<Name>``), ``count(mistake)`` (``count:<mistake>``);
``OWN_KINDS`` (a check's own hint is for these by default); ``Known(kind, hint, pattern="")``,
a pack's hint for a known mistake.

Causes: ``Cause(key, text, hint="", rank=0)``, what the evidence in this answer says went
wrong; a check raises ``CheckFailed(message, kind, cause=Cause(...))`` and the failures whose
causes share a ``key`` are explained once, with the checks they break under it. ``rank``
orders causes up their chain: ``STATEMENT`` (not the structure the statement asks for: another
class), ``ROOT`` (an argument ignored, a part renamed: it explains what follows from it),
``PART`` (a part found to compute something else), 0 otherwise.

Shared state: ``seeded(seed)`` (torch's generator, seeded and locked for the block),
``remembered`` (an expected value computed once per process), ``on_forget``.
``Worker``: the protocol of the handle a check's ``run`` gets. ``MAX_MESSAGE_BYTES``: the most
one reply of a worker may carry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from grader.judge import count_parts, same_weights, too_big
from grader.judge.causes import PART, ROOT, STATEMENT, Cause
from grader.judge.constructors import constructor_cause, constructors_explained, extra_parameters
from grader.judge.declared import close, literal, same_as_reference
from grader.judge.declared_init import same_init_as_reference
from grader.judge.declared_module import redrawn, same_module_as_reference
from grader.judge.differences import largest_text, pair_text
from grader.judge.hints import (
    COUNT,
    INCONSISTENT,
    NOT_DONE,
    OWN_KINDS,
    SHAPE,
    STRUCTURE,
    VALUES,
    WRONG,
    Known,
    count,
    raised,
    returned,
)
from grader.judge.launch.handle import StudentError
from grader.judge.localize import Difference, first_difference
from grader.judge.located import LOCATED, localized
from grader.judge.memo import on_forget, remembered
from grader.judge.properties import (
    ATOL,
    RTOL,
    Check,
    CheckFailed,
    assert_close,
    expect_tensor,
    explain_student_error,
    filled_dict,
    is_stub,
    tensor_text,
)
from grader.judge.renames import module_renames, renamings, under_student_names
from grader.protocol.described import ModuleDescription
from grader.protocol.wire import MAX_MESSAGE_BYTES
from grader.shared.torchseed import seeded

T = TypeVar("T")


class Worker(Protocol):
    """The handle a check's ``run(worker, example)`` gets: one sandboxed worker that has the
    student's module loaded and the exercise's probe table."""

    def call(self, action: str, timeout: float | None = None, **args: Any) -> Any:
        """Run the probe ``action`` with ``args`` (plain data and tensors) in the worker and
        return its plain-data value. The student's code raising there raises ``StudentError``
        here; ``timeout`` defaults to the course's limit for one call."""
        ...

    def call_while(
        self,
        action: str,
        meanwhile: Callable[[], T] | None,
        timeout: float | None = None,
        **args: Any,
    ) -> tuple[Any, T | None]:
        """``call``, running ``meanwhile()`` here while the worker computes (the expected
        value, say); both results."""
        ...


__all__ = [
    "ATOL",
    "COUNT",
    "INCONSISTENT",
    "LOCATED",
    "MAX_MESSAGE_BYTES",
    "NOT_DONE",
    "OWN_KINDS",
    "PART",
    "ROOT",
    "STATEMENT",
    "RTOL",
    "SHAPE",
    "STRUCTURE",
    "VALUES",
    "WRONG",
    "Cause",
    "Check",
    "CheckFailed",
    "Difference",
    "Known",
    "ModuleDescription",
    "StudentError",
    "Worker",
    "assert_close",
    "close",
    "constructor_cause",
    "constructors_explained",
    "count",
    "count_parts",
    "expect_tensor",
    "explain_student_error",
    "extra_parameters",
    "filled_dict",
    "first_difference",
    "is_stub",
    "largest_text",
    "literal",
    "localized",
    "module_renames",
    "on_forget",
    "pair_text",
    "raised",
    "remembered",
    "renamings",
    "redrawn",
    "returned",
    "same_as_reference",
    "same_init_as_reference",
    "same_module_as_reference",
    "same_weights",
    "seeded",
    "tensor_text",
    "too_big",
    "under_student_names",
]
