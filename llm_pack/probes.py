"""The worker's probes of the six exercises: what a worker does with a student's module for
each of them, named in ``pack.toml`` (``probes = "llm_pack.probes:EX3_1"`` ...). Worker side:
they import the grader's public face for probes (``grader.pack.worker``) and the reference,
never the judge or hypothesis."""

from __future__ import annotations

from torch import nn

from grader.pack.worker import (
    Probe,
    constructor,
    describe_module,
    forward,
    keep,
    kept_within,
    load_weights,
    on_meta,
    plain,
    seeded,
    trace_kept,
    truth,
)
from reference import GPT_CONFIG_124M, SelfAttention_v1, SelfAttention_v2

# The attributes of the reference's attention modules that the judge reads (heads, widths).
ATTRS = ("num_heads", "d_out", "head_dim")


# --- 3.1 -------------------------------------------------------------------------------------


def _transfer(
    module,
    state,
    d_in: int,
    d_out: int,
    v2_state: dict,
    v1_state: dict,
    _v1=SelfAttention_v1,
    _v2=SelfAttention_v2,
    _truth=truth,
    _plain=plain,
    _type=type,
):
    """``transfer_weights(sa_v2, sa_v1)`` on modules holding the judge's weights; what both
    really hold after it, read with ``truth`` (not through their methods, classes or
    properties, which the student's code may have replaced), and the classes held from
    before the student's file ran (the defaults)."""
    sa_v2 = _v2(d_in, d_out)
    _truth.load(sa_v2, v2_state)
    sa_v1 = _v1(d_in, d_out)
    _truth.load(sa_v1, v1_state)
    module.transfer_weights(sa_v2, sa_v1)
    weights = {}
    params = dict(_truth.registry(sa_v1, "_parameters"))
    for name in ("W_query", "W_key", "W_value"):
        w = _truth.value(sa_v1, name)
        tensor = _truth.is_tensor(w)
        with _truth.untouched():
            value = _plain(_truth.readable(w), f"sa_v1.{name}") if tensor else None
        weights[name] = {
            "value": value,
            "type": _type(w).__name__,
            "is_parameter": _truth.is_parameter(w),
            "registered": params.get(name) is w and w is not None,
            "requires_grad": _truth.requires_grad(w) if tensor else False,
        }
    blank = _v1(d_in, d_out)  # what sa_v1 had before: anything else was added
    fresh = {*_truth.own_names(blank), *dict(_truth.registry(blank, "_parameters"))}
    added = sorted(
        n
        for n in {*_truth.own_names(sa_v1), *params}
        if n not in fresh and _truth.is_tensor(_truth.value(sa_v1, n))
    )[:10]
    with _truth.untouched():  # the copies too: no mode the student left sees them
        v2_state = _plain(_truth.state(sa_v2), "sa_v2.state_dict()")
    return {
        "v1": weights,
        "v2_state": v2_state,
        "added": [str(n)[:60] for n in added],
    }


# --- any build ------------------------------------------------------------------------------


# The bytes of tensors the modules kept by earlier builds may hold: a third of a worker's default
# memory cap, and far more than the checks' small configs ever make.
KEPT_BYTES = 1024**3


def _module_bytes(m: nn.Module, _tensors=truth.tensors, _detached=truth.detached) -> int:
    """The bytes of the tensors ``m`` holds, read as they really are (``truth``: no method of
    the student's module, or of a tensor subclass, runs)."""
    with truth.untouched():
        values = [_detached(t) for t in _tensors(m).values()]
        return sum(int(t.numel()) * t.element_size() for t in values)


# handle -> (its module, its bytes), read once in a worker's lifetime
_SIZES: dict[object, tuple[object, int]] = {}


def _sized(handle: object, m: nn.Module) -> int:
    """``_module_bytes(m)``, read once per kept module: a check builds hundreds, and reading
    every kept module again before each build made a grade a tenth slower."""
    known = _SIZES.get(handle)
    if known is None or known[0] is not m:
        known = _SIZES[handle] = (m, _module_bytes(m))
    return known[1]


def _release(state: dict, bound: int = KEPT_BYTES) -> None:
    """Before a build, drop the oldest modules earlier builds kept while they hold more than
    ``bound`` bytes. Every module a check builds is kept for the probes that read it; kept for
    the whole exercise, modules built big (sizes the student's classes take from anything but
    the judge's config) would fill the worker's memory and end it, an answer's mistake graded as
    ``error``. The judge reads a module right after building it, so only the oldest go; a
    handle stays a key (``keep`` never gives one twice)."""
    kept = [(h, m) for h, m in state.items() if truth.is_module(m)]
    sizes = [_sized(h, m) for h, m in kept]
    total = sum(sizes)
    for (handle, _), size in zip(kept, sizes, strict=True):
        if total <= bound:
            break
        state[handle] = None
        _SIZES.pop(handle, None)
        total -= size


# --- 3.2, 3.3 --------------------------------------------------------------------------------


def _build_wrapper(
    module,
    state,
    d_in: int,
    context_length: int,
    dropout: float | None,
    seed: int | None = None,
    max_state_bytes: int | None = None,
):
    """``make_2d_wrapper(d_in, context_length, dropout)``; without ``dropout`` when it is None
    (the function's own default is used)."""
    rate = () if dropout is None else (dropout,)
    _release(state)
    with seeded(seed):  # the reproduce snippet seeds torch the same way before building
        m = module.make_2d_wrapper(d_in, context_length, *rate)
    return kept_within(state, m, max_state_bytes, ATTRS)


def _build_gpt2_attention(module, state, seed: int | None = None, max_state_bytes=None):
    _release(state)
    with seeded(seed):
        m = module.gpt2_small_attention()
    return kept_within(state, m, max_state_bytes, ATTRS)


# --- 4.1, 4.2 (student code runs on the meta device: building GPT-2 XL costs no memory) -------


def _configs(module, state):
    return plain(module.GPT2_CONFIGS, "GPT2_CONFIGS")


def _base_config(module, state, _base=GPT_CONFIG_124M, _plain=plain):
    """``reference.GPT_CONFIG_124M`` as the student's code left it (changed in place?): the
    dict itself, held from before the student's file ran (the default), whatever
    ``reference.GPT_CONFIG_124M`` is bound to now."""
    return _plain(_base, "GPT_CONFIG_124M")


# Values a config may share with GPT_CONFIG_124M without harm: changing one cannot change the
# other (the book's config holds nothing else).
IMMUTABLE = (int, float, bool, str, bytes, tuple, frozenset, type(None))


def _config_alias(module, state, size: str, _base=GPT_CONFIG_124M) -> dict:
    """Whether ``GPT2_CONFIGS[size]`` is ``GPT_CONFIG_124M`` itself rather than a copy (the
    reference's, held from before the student's file ran, or the book's dict written into the
    student's file), and which of its keys hold a mutable value of ``GPT_CONFIG_124M``'s:
    identity is only visible here."""
    bases = [_base]
    own = getattr(module, "GPT_CONFIG_124M", None)
    if isinstance(own, dict) and own is not GPT_CONFIG_124M:
        bases.append(own)
    cfg = module.GPT2_CONFIGS[size]
    shared = set()
    if isinstance(cfg, dict):
        for base in bases:
            for key, value in base.items():
                if type(key) is str and not isinstance(value, IMMUTABLE) and cfg.get(key) is value:
                    shared.add(key)
    return {"is_base": any(cfg is base for base in bases), "shared": sorted(shared)[:10]}


# --- 4.3 -------------------------------------------------------------------------------------


def _split_config(module, state):
    return plain(module.GPT_CONFIG_SPLIT_DROPOUT, "GPT_CONFIG_SPLIT_DROPOUT")


# The judge checks these modules' keys and shapes and runs them here with its own weights:
# their values never leave the worker.
def _build_split_model(module, state, cfg: dict):
    _release(state)
    m = module.GPTModel(dict(cfg))
    return {"handle": keep(state, m), "module": describe_module(m, values=False, attrs=ATTRS)}


def _build_split_block(module, state, cfg: dict):
    _release(state)
    m = module.TransformerBlock(dict(cfg))
    return {"handle": keep(state, m), "module": describe_module(m, values=False, attrs=ATTRS)}


EX3_1: dict[str, Probe] = {"transfer": _transfer}
EX3_2: dict[str, Probe] = {
    "build": _build_wrapper,
    "forward": forward,
    "load": load_weights,
    "trace": trace_kept,
    "constructor": constructor,
}
EX3_3: dict[str, Probe] = {
    "build": _build_gpt2_attention,
    "forward": forward,
    "trace": trace_kept,
    "constructor": constructor,
}
EX4_1: dict[str, Probe] = {
    "feedforward_params": on_meta("feedforward_params"),
    "attention_params": on_meta("attention_params"),
    "constructor": constructor,
}
EX4_2: dict[str, Probe] = {
    "configs": _configs,
    "config_alias": _config_alias,
    "base_config": _base_config,
    "total_params": on_meta("total_params"),
    "model_size_mb": on_meta("model_size_mb"),
    "constructor": constructor,
}
EX4_3: dict[str, Probe] = {
    "config": _split_config,
    "build": _build_split_model,
    "build_block": _build_split_block,
    "load": load_weights,
    "forward": forward,
    "trace": trace_kept,
    "constructor": constructor,
}
