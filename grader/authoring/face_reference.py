"""The reference of the public face (``grader.pack.judge``, ``grader.pack.worker``), written from
its code: each exported name with its signature, its docstring and an example.

``python -m grader.authoring.face_reference`` writes ``docs/pack-api.md``; ``--check`` exits 1
when the page is not what the code gives (a test runs it: a stale page fails). ``signatures()``
is the face's names and signatures alone, one line each, which a test compares with a snapshot
kept in the tests, so that a change to the face is a decision and not an accident.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import grader.pack.judge as judge_face
import grader.pack.worker as worker_face

FACES: tuple[ModuleType, ...] = (judge_face, worker_face)
PAGE = Path(__file__).resolve().parents[2] / "docs" / "pack-api.md"

# One example a name: what a pack's code writes with it (each compiles; the docstrings and
# docs/writing-an-exercise.md say more).
EXAMPLES: dict[str, str] = {
    "ATOL": "assert_close(got, expected, 'logits', atol=ATOL * 10)",
    "RTOL": "close(got, expected, 'loss', rtol=RTOL)",
    "COUNT": "raise CheckFailed('off by 2,304', COUNT)",
    "INCONSISTENT": "Known(INCONSISTENT, 'your function gives two answers for one input')",
    "LOCATED": "assert failure.kind in (LOCATED, VALUES)",
    "MAX_MESSAGE_BYTES": "assert x.numel() * 4 < MAX_MESSAGE_BYTES",
    "NOT_DONE": "raise CheckFailed('not done yet', NOT_DONE)",
    "OWN_KINDS": "Check(..., hint_kinds=(*OWN_KINDS, STRUCTURE))",
    "PART": "Cause('part:Norm', 'your Norm differs', rank=PART)",
    "ROOT": "Cause('ignored:d_out', 'd_out is never used', rank=ROOT)",
    "STATEMENT": "Cause('statement:class', 'not the class the statement asks for', rank=STATEMENT)",
    "SHAPE": "raise CheckFailed(f'shape {got.shape}, expected (2, 3)', SHAPE)",
    "STRUCTURE": "raise CheckFailed('no weight named W_query', STRUCTURE)",
    "VALUES": "raise CheckFailed('the values differ', VALUES)",
    "WRONG": "raise CheckFailed('returned 3, expected 4', WRONG)",
    "Cause": "raise CheckFailed(msg, VALUES, cause=Cause('scale', 'no 1/sqrt(d) scale', hint))",
    "Check": "Check(name='double doubles', points=1, strategy=st.integers(), run=check_double,\n"
    "      hint='multiply by 2')",
    "CheckFailed": "raise CheckFailed(f'double({x}) returned {got}, expected {2 * x}')",
    "Difference": "found = first_difference(oracle, trace)\n"
    "print(found.sentence() if found else 'none')",
    "ModuleDescription": "described: ModuleDescription = reply['module']\n"
    "if not described.get('is_module'): raise CheckFailed('no module', returned('list'))",
    "Known": "Known(count('biases'), 'qkv_bias=True adds one bias per output')",
    "StudentError": "try:\n    worker.call('run', x=x)\nexcept StudentError as e:\n"
    "    print(explain_student_error(e.info))",
    "Worker": "def run(worker: Worker, example: dict) -> None:\n"
    "    got = worker.call('double', x=example['x'])",
    "assert_close": "assert_close(got, expected, 'sa_v1(x)')",
    "close": "close([a, b], (expected_a, expected_b), 'pairs(x)')",
    "constructor_cause": "cause = constructor_cause(worker, error.info, {'Block': 'cfg'})",
    "constructors_explained": "with constructors_explained(worker, {'Block': 'cfg'}):\n"
    "    reply = worker.call('build', cfg=cfg)",
    "count": "raise CheckFailed('off by +768: the biases', count('biases'))",
    "count_parts": "found = count_parts.parts(lambda: Model(cfg), repeated=('blocks',))\n"
    "said = count_parts.explain(got - expected, found)",
    "expect_tensor": "got = expect_tensor(worker.call('forward', handle=h, x=x), 'forward(x)')",
    "explain_student_error": "message = explain_student_error(error.info)",
    "extra_parameters": "cause = extra_parameters(worker, 'Block', 'cfg')",
    "filled_dict": "cfg = filled_dict(worker.call('config'), 'GPT_CONFIG')",
    "first_difference": "found = first_difference(reference_module, trace, renames)",
    "is_stub": "if is_stub(error.info):\n    raise CheckFailed('not done yet', NOT_DONE)",
    "largest_text": "print(largest_text(expected, got))",
    "literal": "snippet = f'x = {literal(x)}'",
    "localized": "with localized(worker, reply, lambda: reference, x):\n"
    "    assert_close(got, expected, 'your model(x)')",
    "module_renames": "renames = module_renames({'W_query.weight': 'wq.weight'})",
    "on_forget": "on_forget(cache.clear)",
    "pair_text": "print(pair_text(expected, got))",
    "raised": "raise CheckFailed(explain_student_error(e.info), raised(e.info), info=e.info)",
    "remembered": "@remembered\ndef model_of(cfg: dict, seed: int) -> torch.nn.Module: ...",
    "renamings": "said = renamings({'layers.0.weight': (2, 3)}, reply['module']['shapes'])",
    "redrawn": "reference=lambda ex: redrawn(LoRALayer(4, 2, 2, 2.0), seed=ex['seed'])",
    "returned": "raise CheckFailed('returned None', returned('NoneType'))",
    "same_as_reference": "same_as_reference(name='mean_of(x) is the mean', answer='ex9:mean_of',\n"
    "    strategy=xs, arguments=lambda ex: {'x': ex['x']}, reference=mean, points=10,\n"
    "    hint='divide by how many there are')",
    "same_module_as_reference": "same_module_as_reference(name='LoRALayer(...)(x)',\n"
    "    answer='exE_lora:LoRALayer', strategy=cases, arguments=sizes, reference=book_lora,\n"
    "    inputs=lambda ex: torch.ones(2, ex['in_dim']), points=4, hint='alpha * (x @ A @ B)')",
    "same_init_as_reference": "same_init_as_reference(name='B starts at zero, A as kaiming',\n"
    "    answer='exE_lora:LoRALayer', strategy=cases, arguments=('in_dim', 'out_dim', 'rank',\n"
    "    'alpha'), reference=book_lora, points=2, hint='torch.zeros for B')",
    "same_weights": "oracle = same_weights.reused('lora', described, lambda: rebuild(described))",
    "seeded": "with seeded(123):\n    layer = torch.nn.Linear(3, 2)",
    "tensor_text": "print(tensor_text(expected))",
    "too_big": "message = too_big.refusal('make_layer(4, 2)', reply['module'], '', margin=8)",
    "under_student_names": "with localized(worker, reply, oracle, x, names=under_student_names):\n"
    "    assert_close(got, expected, 'your model(x)')",
    "NotPlainData": "try:\n    value = plain(out, 'your function returned')\n"
    "except NotPlainData as e:\n    print(e)",
    "Probe": "PROBES: dict[str, Probe] = {'double': _double}",
    "constructor": "EX9_3 = {'build': _build, 'constructor': constructor}",
    "kept_within": "return kept_within(state, module.make_layer(d_in, d_out), max_state_bytes)",
    "answer_probes": "EX5_2 = answer_probes('calc_loss_batch', build={'model': build_model})",
    "describe_module": "reply = {'handle': keep(state, made), 'module': describe_module(made)}",
    "forward": "EX9_3 = {'build': _build, 'forward': forward, 'load': load_weights}",
    "keep": "handle = keep(state, module.make_layer(d_in, d_out))",
    "kept_values": "EX9_3 = {'build': _build, 'values': kept_values}",
    "load_weights": "EX9_3 = {'build': _build, 'forward': forward, 'load': load_weights}",
    "module_probes": "EX7_1 = module_probes('Block') | module_probes('Wrapper',\n"
    "    build={'block': build_block})  # a torch.nn.Linear argument needs no build=",
    "number": "count = number(module.parameter_count(cfg), 'parameter_count(cfg)')",
    "on_meta": "EX9_4 = {'count': on_meta('parameter_count')}",
    "plain": "value = plain(module.double(x), 'double returned')",
    "truth": "weights = truth.state(model)  # what the module holds, not what it says",
    "trace_kept": "EX4_3 = {'build': _build, 'trace': trace_kept}",
    "trace_module": "calls = trace_module(model, x)",
}


def _annotation(value: Any) -> str:
    text = value if isinstance(value, str) else inspect.formatannotation(value)
    return text.replace("typing.", "")


def signature(obj: Any) -> str:
    """``(a: int, b: str = 'x') -> bool`` as the code writes it (annotations unquoted)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    parts = []
    star = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        star |= p.kind is p.VAR_POSITIONAL
        stars = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        text = stars + p.name
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {p.default!r}" if p.annotation is not p.empty else f"={p.default!r}"
        parts.append(text)
    returns = sig.return_annotation
    tail = f" -> {_annotation(returns)}" if returns is not sig.empty else ""
    return f"({', '.join(parts)}){tail}"


def _kind(obj: Any) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj) and inspect.isroutine(obj):
        return "function"
    return "value"


def _protocol_methods(obj: Any) -> list[str]:
    """The methods a protocol (``Worker``) declares; none for anything else."""
    if not (inspect.isclass(obj) and getattr(obj, "_is_protocol", False)):
        return []
    return sorted(m for m in vars(obj) if not m.startswith("_") and callable(getattr(obj, m)))


def _entry(name: str, obj: Any) -> tuple[str, str]:
    """The declaration (``name(...) -> ...``, ``class Name(...)``, ``NAME = value``) and the
    docstring of one exported name (a protocol's: with its methods')."""
    kind = _kind(obj)
    if kind == "value":
        return f"{name} = {obj!r}", ""
    if kind == "module":  # by name, never by where this checkout lies
        return f"{name}  # the module {obj.__name__}", inspect.getdoc(obj) or ""
    methods = "".join(
        f"\n\n- `{m}{signature(getattr(obj, m))}`: {inspect.getdoc(getattr(obj, m))}"
        for m in _protocol_methods(obj)
    )
    sig = "" if methods else signature(obj)
    if kind == "class":
        sig = sig.removesuffix(" -> None")
    doc = inspect.getdoc(obj) or ""
    return f"{'class ' if kind == 'class' else ''}{name}{sig}", doc + methods


def signatures() -> str:
    """Every exported name of the face and its signature (a value's repr), one a line."""
    lines = []
    for face in FACES:
        for name in face.__all__:
            obj = getattr(face, name)
            lines.append(f"{face.__name__}: {_entry(name, obj)[0]}")
            lines += [
                f"{face.__name__}: {name}.{m}{signature(getattr(obj, m))}"
                for m in _protocol_methods(obj)
            ]
    return "\n".join(lines) + "\n"


def render() -> str:
    """The page: each face's docstring, then each name: its signature, docstring, example."""
    out = [
        "# The public face for pack authors: reference",
        "",
        "Written from the code by `python -m grader.authoring.face_reference` (do not edit by "
        "hand: `tests/test_pack_api.py` fails when this page is not what the code gives). "
        "How to use these names: [writing-an-exercise.md](writing-an-exercise.md).",
    ]
    for face in FACES:
        out += ["", f"## `{face.__name__}`", "", inspect.getdoc(face) or ""]
        for name in face.__all__:
            heading, doc = _entry(name, getattr(face, name))
            out += ["", f"### `{name}`", "", "```python", heading, "```"]
            out += ["", doc] if doc else []
            out += ["", "Example:", "", "```python", EXAMPLES[name], "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        stale = not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text
        print(f"{PAGE} is stale: run python -m grader.authoring.face_reference" if stale else "ok")
        return 1 if stale else 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
