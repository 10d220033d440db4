"""The worker's probes of the chapter-5 pack: what a worker does with a student's module. Worker
side: they import the grader's probe library and the pack's reference, never the judge or
hypothesis. Every comparison is the judge's; these only call and report."""

from __future__ import annotations

import torch
from torch import nn

from grader.pack.worker import Probe, answer_probes, plain, seeded
from llm_ch5_pack.reference import build_model

MAX_RECORDED = 64  # model calls whose input is sent back; more are only counted


class Recorder(nn.Module):
    """The judge's model, recording what each call gets (the first ``MAX_RECORDED`` inputs)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.seen: list = []
        self.n_calls = 0

    def forward(self, idx, *args, **kwargs):
        self.n_calls += 1
        if len(self.seen) < MAX_RECORDED:
            if isinstance(idx, torch.Tensor):
                self.seen.append(idx.detach().to("cpu").clone())
            else:
                self.seen.append({"not_a_tensor": type(idx).__name__})
        return self.model(idx, *args, **kwargs)


def _generate(
    module,
    state,
    model: dict,
    idx: torch.Tensor,
    max_new_tokens: int,
    context_size: int,
    settings: dict,
    seed: int = 0,
    record: bool = False,
):
    """``generate(model, idx, max_new_tokens, context_size, **settings)`` on the judge's model
    (rebuilt here from plain data) after ``torch.manual_seed(seed)``; what it returned and, with
    ``record``, what the model was called with."""
    net = build_model(model)
    recorder = Recorder(net) if record else None
    with seeded(seed):
        out = module.generate(
            recorder if record else net,
            idx.clone(),
            max_new_tokens=max_new_tokens,
            context_size=context_size,
            **settings,
        )
    reply = {"out": plain(out, "your generate returned")}
    if recorder is not None:
        reply["calls"] = recorder.seen
        reply["n_calls"] = recorder.n_calls
    return reply


def _settings(module, state):
    return plain(module.deterministic_settings(), "deterministic_settings() returned")


def _is_deterministic(module, state, temperature: float, top_k: int | None):
    return plain(
        module.is_deterministic(temperature, top_k),
        f"is_deterministic({temperature!r}, {top_k!r}) returned",
    )


# "call": generate(model, idx, ...) for the declared greedy checks; "generate": the others'
EX5_1: dict[str, Probe] = {
    "generate": _generate,
    **answer_probes("generate", build={"model": build_model}),
}
EX5_2 = answer_probes("calc_loss_batch", build={"model": build_model})
EX5_3: dict[str, Probe] = {"settings": _settings, "is_deterministic": _is_deterministic}
