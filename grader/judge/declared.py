"""The declarative form of the common check: the student's function, called on drawn inputs,
must give what a reference gives, up to a tolerance.

``same_as_reference`` declares it in a few lines (the answer, a strategy, the arguments, a
reference, points and a hint) and returns an ordinary ``Check``: hypothesis draws and shrinks
the examples, the call runs in the sandboxed worker (the probe table of
``grader.worker.probes.answer_probes``), the reference is computed here meanwhile, and a
failure gets a message that shows both values where they differ most and a reproduce snippet
written from the example. Everything that reads checks (reports, the dashboard, the exports,
``check-pack``) reads these as any other.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from hypothesis import strategies as st

from grader.judge import hints
from grader.judge.launch.handle import WorkerHandle
from grader.judge.properties import ATOL, RTOL, Check, CheckFailed, assert_close, tensor_text
from grader.protocol import layers
from grader.shared.torchseed import seeded

Example = Any
# (got, expected, what) -> None or CheckFailed; a compare with a parameter named ``example``
# gets the example too (a comparison that depends on it: several right answers, say)
Compare = Callable[..., None]
# what the answer is called with: a function of the example giving name -> value in the call's
# order, or the names of a dict example's items to pass, in that order
Arguments = Callable[[Example], Mapping[str, Any]] | Sequence[str]


def arguments_of(arguments: Arguments) -> Callable[[Example], Mapping[str, Any]]:
    """``arguments`` as a function of the example. Names pick a dict example's items in the
    order written: the order of a drawn dict's keys is not the one its strategy declares
    (``st.fixed_dictionaries`` varies it), so an example is never passed on as it comes."""
    if callable(arguments):
        function = arguments

        def drawn_alone(example: Example) -> Mapping[str, Any]:
            # A layer built here (torch.nn.Linear(...)) draws its weights: with no other
            # thread's draws in between (the judge loads its own weights later).
            with seeded(None):
                return function(example)

        return drawn_alone
    names = tuple(arguments)
    if isinstance(arguments, str) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"arguments={arguments!r}: give a function of the example, or the names of its "
            "items in the order the answer takes them, e.g. ('x', 'n')"
        )
    return lambda example: {n: example[n] for n in names}


def literal(value: Any) -> str | None:
    """Python source that rebuilds ``value`` (plain data and tensors), or None."""
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, torch.nn.Module):
        return layers.source(value)
    if isinstance(value, torch.Tensor):
        if value.numel() > 4096:
            return None
        return f"torch.tensor({_items(value.tolist(), value.dtype)}, dtype={value.dtype})"
    if isinstance(value, list | tuple):
        found = [literal(v) for v in value]
        items = [i for i in found if i is not None]
        if len(items) < len(found):
            return None
        inner = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        values = [literal(v) for v in value.values()]
        if any(i is None for i in values):
            return None
        return "{" + ", ".join(f"{k!r}: {i}" for k, i in zip(value, values, strict=True)) + "}"
    return None


def _items(items: Any, dtype: torch.dtype) -> str:
    """A tensor's ``tolist()`` as Python source: a float32 value in the fewest digits that read
    back as the same float32 (a float32 spelled as a double takes 17), a value that is not
    finite as ``float('inf')``."""
    if isinstance(items, list):
        return "[" + ", ".join(_items(i, dtype) for i in items) + "]"
    if not isinstance(items, float):
        return repr(items)
    if not math.isfinite(items):
        return f"float({str(items)!r})"
    if dtype != torch.float32:
        return repr(items)
    for digits in range(6, 10):  # 9 significant digits always read back as the same float32
        text = f"{items:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == items:
            break
    return text if any(c in text for c in ".e") else text + ".0"


def close(got: Any, expected: Any, what: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    """The default comparison: tensors elementwise within ``atol + rtol * |expected|`` (a
    tensor of one element and a number compare as numbers), numbers the same way; tuples, lists
    and dicts element by element (a tuple may come back as a list: the worker sends plain data),
    the first differing element named ("element [1] of ...", "key 'loss' of ..."); anything
    else by ``==``; else ``CheckFailed`` saying how they differ."""
    _close(got, expected, what, "", rtol, atol)


def _close(got: Any, expected: Any, what: str, path: str, rtol: float, atol: float) -> None:
    """``close`` at ``path`` (the indices and keys of a structure's element, "" for the whole)."""
    where = _where(what, path)
    if isinstance(expected, list | tuple):
        _close_items(got, expected, what, path, rtol, atol)
    elif isinstance(expected, dict):
        _close_keys(got, expected, what, path, rtol, atol)
    elif isinstance(expected, torch.Tensor) and expected.numel() == 1 and _number(got):
        _close_numbers(got, expected.item(), where, rtol, atol)
    elif isinstance(expected, torch.Tensor):
        assert_close(got, expected, where, rtol, atol)
    elif _number(expected):
        _close_numbers(got, expected, where, rtol, atol)
    elif isinstance(got, torch.Tensor) or got != expected:
        raise CheckFailed(f"{where} is {got!r}, expected {expected!r}")


def _close_numbers(got: Any, expected: int | float, where: str, rtol: float, atol: float) -> None:
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = got.item()
    if not _number(got):
        said = f"{where} should be a number, but it is {_type_name(got)}"
        raise CheckFailed(said, hints.returned(type(got).__name__))
    if not math.isclose(float(got), float(expected), rel_tol=rtol, abs_tol=atol):
        raise CheckFailed(
            f"{where} is {got!r}, expected {expected!r} (a difference of "
            f"{abs(float(got) - float(expected)):.3g}; allowed: {atol:g} + {rtol:g} x "
            f"|expected|)",
            hints.VALUES,
        )


def _close_items(
    got: Any, expected: list | tuple, what: str, path: str, rtol: float, atol: float
) -> None:
    """A tuple or a list element by element; a tuple accepts a list (plain data has no tuple)."""
    where = _where(what, path)
    if not isinstance(got, list | tuple):
        n = len(expected)
        elements = "an empty one" if n == 0 else f"of {n} element" + ("s" if n > 1 else "")
        raise CheckFailed(
            f"{where} should be a {type(expected).__name__} ({elements}), but it is "
            f"{_type_name(got)}",
            hints.returned(type(got).__name__),
        )
    if len(got) != len(expected):
        n = len(got)
        raise CheckFailed(
            f"{where} has {n} element{'' if n == 1 else 's'}, expected {len(expected)}",
            hints.SHAPE,
        )
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        _close(g, e, what, f"{path}[{i}]", rtol, atol)


def _close_keys(got: Any, expected: dict, what: str, path: str, rtol: float, atol: float) -> None:
    """A dict key by key: the same keys, then each value."""
    where = _where(what, path)
    if not isinstance(got, dict):
        not_dict = f"{where} should be a dict, but it is {_type_name(got)}"
        raise CheckFailed(not_dict, hints.returned(type(got).__name__))
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    if missing or extra:
        said = [f"no key {', '.join(map(repr, missing))}"] if missing else []
        said += [f"an unexpected key {', '.join(map(repr, extra))}"] if extra else []
        raise CheckFailed(f"{where} has {' and '.join(said)}")
    for key, e in expected.items():
        _close(got[key], e, what, f"{path}[{key!r}]", rtol, atol)


def _where(what: str, path: str) -> str:
    """The element at ``path`` of ``what`` in words: "key 'loss' of f(x)", "element [1] of
    f(x)", "element [1]['loss'] of f(x)"."""
    if not path:
        return what
    if path.startswith("[") and path.endswith("]") and path.count("[") == 1 and path[1] in "'\"":
        return f"key {path[1:-1]} of {what}"
    return f"element {path} of {what}"


def _type_name(value: Any) -> str:
    """The type of ``value`` as a message says it ("None" rather than "NoneType"); the kind of
    the failure keeps Python's name (``hints.returned(type(value).__name__)``)."""
    return "None" if value is None else type(value).__name__


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def has_parameter(function: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def call_text(function: str, args: Mapping[str, Any], keywords: tuple[str, ...]) -> str:
    parts = [f"{n}={n}" if n in keywords else n for n in args]
    return f"{function}({', '.join(parts)})"


def snippet_head(
    module: str,
    name: str,
    args: Mapping[str, Any],
    setup: str | Callable[[Example], str] | None,
    example: Example,
) -> list[str]:
    """A declared check's snippet up to the call: the imports of ``name`` from the student's
    ``module``, ``setup``'s code (a string formatted with a dict example's items, or a function
    of the example), and each argument ``setup`` does not define, as a literal."""
    if setup is None:
        defined = ""
    else:
        defined = setup.format(**example) if isinstance(setup, str) else setup(example)
    lines = ["import torch", f"from exercises.{module} import {name}", ""]
    lines += [defined.rstrip("\n")] if defined else []
    for n, v in args.items():
        if f"{n} =" not in defined:
            lines.append(f"{n} = {literal(v) or '...  # ' + type(v).__name__}")
    return lines


def same_type(got: Any, wanted: type | tuple[type, ...], what: str) -> None:
    """Fail (``returned``) unless ``got`` is an instance of ``wanted`` (``bool`` is no number
    here, though Python makes it an ``int``)."""
    kinds = wanted if isinstance(wanted, tuple) else (wanted,)
    if isinstance(got, kinds) and not (isinstance(got, bool) and bool not in kinds):
        return
    names = " or ".join(k.__name__ for k in kinds)
    said = f"{what} should be a {names}, but it is {_type_name(got)}"
    raise CheckFailed(said, hints.returned(type(got).__name__))


def called_as_answer(
    strategy: st.SearchStrategy | Mapping[str, st.SearchStrategy],
    arguments: Arguments | None,
    reference: Callable[..., Any],
    keywords: tuple[str, ...],
) -> tuple[st.SearchStrategy, Callable[[Example], Mapping[str, Any]], Callable[[Example], Any]]:
    """The strategy, the answer's arguments and the expected value of a declared check.
    ``strategy`` a dict name -> strategy: each example is the answer's arguments, in that
    order, and the reference function is called as the answer is (on copies of them); else
    ``arguments`` and the reference are functions of the example (or ``arguments`` names its
    items)."""
    if not isinstance(strategy, Mapping):
        if arguments is None:
            raise ValueError(
                "arguments=None: give what the answer is called with, or give strategy as a "
                "dict name -> strategy of the answer's arguments"
            )
        return strategy, arguments_of(arguments), reference
    values_of = arguments_of(arguments if arguments is not None else tuple(strategy))

    def expected(example: Example) -> Any:
        args = copy.deepcopy(dict(values_of(example)))  # the reference may change them
        named = {n: v for n, v in args.items() if n in keywords}
        return reference(*[v for n, v in args.items() if n not in keywords], **named)

    return st.fixed_dictionaries(dict(strategy)), values_of, expected


def _named(example: Any, names: tuple[str, ...]) -> Any:
    """A tuple example of a dict of strategies as the dict it stands for (the arguments in the
    answer's order, as ``@example(...)`` writes them); any other example as it is."""
    if not isinstance(example, tuple):
        return example
    if len(example) != len(names):
        raise ValueError(
            f"examples: {example!r} gives {len(example)} arguments, the strategy names "
            f"{len(names)} ({', '.join(names)})"
        )
    return dict(zip(names, example, strict=True))


def awaiting_answer(make: Callable[..., Check]) -> Check:
    """A declared check written without ``answer``: ``make(answer=...)`` for its exercise once
    the exercise's checks are read (``Check.bind``): the exercise's file and the one name it
    asks for (``names`` in pack.toml). An exercise that asks for several needs ``answer``."""

    def bind(stem: str, names: tuple[str, ...]) -> Check:
        if len(names) != 1:
            listed = ", ".join(names) or "none"
            raise ValueError(
                f"a check without answer= in an exercise that names {len(names)} answers "
                f"({listed}): say which, answer='{stem}:<name>'"
            )
        return make(answer=f"{stem}:{names[0]}")

    return dataclasses.replace(make(answer="exercise:answer"), bind=bind)


def same_as_reference(
    *,
    name: str,
    answer: str | None = None,
    strategy: st.SearchStrategy | Mapping[str, st.SearchStrategy],
    reference: Callable[..., Any],
    points: float = 1.0,
    hint: str,
    arguments: Arguments | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
    compare: Compare | None = None,
    setup: str | Callable[[Example], str] | None = None,
    keywords: tuple[str, ...] = (),
    seed: Callable[[Example], int] | None = None,
    probe: str = "call",
    max_examples: int = 20,
    examples: tuple[Any, ...] = (),
    hint_kinds: tuple[str, ...] = hints.OWN_KINDS,
    known: tuple[hints.Known, ...] = (),
    counterexample: Callable[[Example], Any] | None = None,
    returns: type | tuple[type, ...] | None = None,
) -> Check:
    """A ``Check`` that ``answer`` (``"<student module>:<function>"``, e.g.
    ``"ex_mean:mean_of"``) called with ``arguments(example)`` (a dict
    name -> plain data or tensors, passed in order; the names in ``keywords`` by keyword), or
    with a dict example's items ``arguments`` names (``("x", "n")``, in that order)
    returns ``reference(example)``, within ``rtol``/``atol`` (``close``) or as ``compare``
    decides: ``compare(got, expected, what)``, or ``compare(got, expected, what,
    example=example)`` when it has a parameter named ``example`` (a comparison that needs the
    example, e.g. to accept any of several right answers).

    ``setup(example)`` is the snippet's code that defines the arguments a literal cannot
    (a model: ``model = build_model(...)``), or a string formatted with a dict example's items
    (``"model = build_model({cfg!r})"``); the others are written as literals. With ``seed``,
    the worker calls the answer after ``torch.manual_seed(seed(example))`` (so does the
    snippet); seed the reference yourself (``seeded``) if it draws. ``probe`` is the probe
    table's entry that calls the answer (``answer_probes`` names it ``"call"``).

    Shorter, as ``@given(**strategies)``: ``strategy`` a dict name -> strategy of the answer's
    arguments, in the answer's order (``{"ids": st.lists(...), "size": st.integers(1, 4)}``);
    each example is then those arguments, ``arguments`` may be left out, and the reference
    function is called as the answer is (``reference=oracle.windows``).
    ``points`` is the check's weight in its exercise (default 1: an exercise's checks weigh
    alike; the exercise's points, in pack.toml, are shared out in proportion). ``examples``
    are tried first: dicts, or, with ``strategy`` a dict, tuples of the arguments in order.
    ``counterexample(example)`` is what a report shows of a failing example (default: the
    example). ``returns``: the type (or types) the answer must return, checked first
    (``returns=float``: a one-element tensor does not do; ``close`` alone compares it as a
    number).
    """
    if answer is None:  # the exercise's one answer, once its exercise is known
        given = {k: v for k, v in locals().items() if k != "answer"}  # every argument, as given
        return awaiting_answer(functools.partial(same_as_reference, **given))
    module, _, function = answer.partition(":")
    if not module or not function:
        raise ValueError(f"answer={answer!r}: give it as '<student module>:<function>'")
    with_example = compare is not None and has_parameter(compare, "example")
    if isinstance(strategy, Mapping):  # a tuple example is the arguments in order
        examples = tuple(_named(e, tuple(strategy)) for e in examples)
    strategy, values_of, reference = called_as_answer(strategy, arguments, reference, keywords)

    def judge(got: Any, expected: Any, what: str, example: Example) -> None:
        if returns is not None:
            same_type(got, returns, what)
        if compare is None:
            close(got, expected, what, rtol, atol)
        elif with_example:
            compare(got, expected, what, example=example)
        else:
            compare(got, expected, what)

    def run(worker: WorkerHandle, example: Example) -> None:
        args = dict(values_of(example))
        got, expected = worker.call_while(
            probe,
            lambda: reference(example),
            args=[[n, layers.described(v, n)] for n, v in args.items()],
            keywords=list(keywords),
            seed=None if seed is None else int(seed(example)),
        )
        judge(got, expected, call_text(function, args, keywords), example)

    def reproduce(example: Example) -> str:
        args = dict(values_of(example))
        lines = snippet_head(module, function, args, setup, example)
        if seed is not None:
            lines.append(f"torch.manual_seed({int(seed(example))})")
        with torch.no_grad():
            expected = reference(example)
        shown = tensor_text(expected) if isinstance(expected, torch.Tensor) else repr(expected)
        lines += [
            f"print('yours:   ', {call_text(function, args, keywords)})",
            f"print('expected:', {shown!r})",
        ]
        return "\n".join(lines) + "\n"

    return Check(
        name=name,
        points=points,
        strategy=strategy,
        run=run,
        hint=hint,
        reproduce=reproduce,
        counterexample=counterexample,
        max_examples=max_examples,
        examples=examples,
        hint_kinds=hint_kinds,
        known=known,
    )
