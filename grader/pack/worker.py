"""The worker side of the public face: what a pack's probes import. Nothing here imports the
judge or hypothesis (an import contract holds it).

A probe is ``probe(module, state, **args)``: ``module`` is the student's module, ``state`` a
dict that lives as long as the worker (kept objects), ``args`` what the judge sent (plain data
and tensors). It returns plain data and tensors, and judges nothing.

- ``plain(obj, where="the value")``: a copy of ``obj`` made of dicts, lists, str, numbers,
  bools, None and CPU tensors, else ``NotPlainData`` saying in the student's words (``where``:
  "your forward returned") what came back.
- ``number(obj, what)``: an int or float from an answer, or a description of what came instead.
- Handing a module over: ``keep(state, module) -> handle`` keeps the student's module in the
  worker; ``forward(module, state, handle, x, train=False, seed=0)`` is a probe running it
  (without gradients, after ``torch.manual_seed(seed)``); ``load_weights(module, state,
  handle, weights)`` a probe loading the judge's weights into it; ``describe_module(m,
  values=True, attrs=())`` its class, state, parameters, buffers and dropouts as plain data,
  for the judge to rebuild a clean reference module (``ModuleDescription``, a ``TypedDict``);
  ``trace_kept``/``trace_module`` record each submodule's input and output (the judge's
  ``first_difference`` reads them).
- ``kept_within(state, module, max_state_bytes, attrs=())``: a build's reply within a bound:
  ``{"handle", "module"}`` with the module kept and described, or, for a module whose state is
  over ``max_state_bytes`` (an honest wrong answer far bigger than any right one), no handle
  and its class and ``too_big`` (parameter count, largest parameters, first parts), for the
  judge's ``grader.pack.judge.too_big``.
- ``constructor``: a probe saying how the student's class ``name`` is built (``__init__``
  defined or misspelled, its parameters), for the judge's ``constructor_cause``.
- ``on_meta(fn_name)``: a probe calling ``fn_name(cfg)`` under the ``meta`` device.
- ``answer_probes(function, build=None)``: the probe table of a declarative check
  (``grader.pack.judge.same_as_reference``); ``build`` maps an argument's name to the function
  that rebuilds it from the plain data the judge sent (a model from its config and weights).
- ``module_probes(builder, build=None)``: the probe table of a declarative module check
  (``grader.pack.judge.same_module_as_reference``): ``"build:<builder>"`` calls the student's
  class or function ``builder`` with the judge's arguments and keeps the module;
  ``"values"``, ``"load"``, ``"forward"`` and ``"trace"`` are ``kept_values`` (the kept module's
  state as it really is), ``load_weights``, ``forward`` and ``trace_kept``.
- ``seeded(seed)``: torch's generator seeded (``torch.manual_seed``) for the block.
- ``truth``: what a student's module and tensors really hold (state, parameters,
  ``requires_grad``), read so that student code cannot redirect the read
  (``grader.worker.truth``); bind what a probe uses in its defaults, as the first pack's
  probes do, so that rebinding a global later changes nothing.
"""

from __future__ import annotations

from grader.protocol.described import ModuleDescription
from grader.shared.torchseed import seeded
from grader.worker import truth
from grader.worker.bounded import kept_within
from grader.worker.constructor import constructor
from grader.worker.declared import kept_values, module_probes
from grader.worker.probes import NotPlainData, Probe, answer_probes, describe_module, number, plain
from grader.worker.probes import _forward as forward
from grader.worker.probes import _keep as keep
from grader.worker.probes import _load as load_weights
from grader.worker.probes import _on_meta as on_meta
from grader.worker.trace import trace_kept, trace_module

__all__ = [
    "ModuleDescription",
    "NotPlainData",
    "Probe",
    "answer_probes",
    "constructor",
    "describe_module",
    "forward",
    "keep",
    "kept_values",
    "kept_within",
    "load_weights",
    "module_probes",
    "number",
    "on_meta",
    "plain",
    "seeded",
    "trace_kept",
    "trace_module",
    "truth",
]
