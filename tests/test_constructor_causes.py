"""Issue 56's general mechanisms, each from its own evidence: a class's constructor (misspelled
``__init__``, a signature other than the exercise's call), an inexact count, a hard-coded size
and a book dropout fed where the book's forward feeds something else."""

from __future__ import annotations

import types

import torch
from torch import nn

from grader.judge.localize import Difference
from grader.pack.judge import constructor_cause, extra_parameters
from grader.pack.worker import constructor
from llm_pack import probes
from llm_pack.checks.dropout_places import (
    dropout_calls,
    dropout_in_another_place,
    in_another_order,
    other_uses,
)
from llm_pack.checks.ex4_3 import hard_coded_size, size_from_default
from llm_pack.checks.gpt_reference import inexact, rounded
from reference import GPT_CONFIG_124M, GPTModel


class Misspelled(nn.Module):
    def __int__(self, cfg):  # the mistake under test
        super().__init__()


class Mangled(nn.Module):
    def __init(self, cfg):  # stored as _Mangled__init
        super().__init__()


class TakesRates(nn.Module):
    def __init__(self, cfg, rate, other=0.1):
        super().__init__()


class TakesMore(nn.Module):
    def __init__(self, cfg, *rates, **sizes):
        super().__init__()


class Right(nn.Module):
    def __init__(self, cfg):
        super().__init__()


STUDENT = types.SimpleNamespace(
    Misspelled=Misspelled, Mangled=Mangled, TakesRates=TakesRates, TakesMore=TakesMore, Right=Right
)


class ProbingWorker:
    """Runs the ``constructor`` probe on ``STUDENT`` as the worker would."""

    def call(self, action: str, **args):
        assert action == "constructor"
        return constructor(STUDENT, {}, **args)


def type_error(text: str) -> dict:
    return {"type": "TypeError", "message": text, "frames": []}


def test_the_probe_finds_a_misspelled_or_mangled_init_and_the_parameters():
    assert constructor(STUDENT, {}, "Misspelled")["near_init"] == ["__int__"]
    assert constructor(STUDENT, {}, "Mangled")["near_init"] == ["__init"]
    found = constructor(STUDENT, {}, "TakesRates")
    assert found["defines_init"] and found["parameters"] == ["cfg", "rate", "other=0.1"]
    assert constructor(STUDENT, {}, "Right")["near_init"] == []
    assert constructor(STUDENT, {}, "Absent") == {"found": False}


def test_a_type_error_building_a_class_names_its_misspelled_init():
    said = "Misspelled.__init__() takes 1 positional argument but 2 were given"
    cause = constructor_cause(ProbingWorker(), type_error(said), {})
    assert cause is not None and "__int__" in cause.text and "misspelled" in cause.text
    assert "rename __int__ to __init__" in cause.hint


def test_a_type_error_names_the_signature_only_for_a_class_the_exercise_builds():
    said = "TakesRates.__init__() missing 1 required positional argument: 'rate'"
    cause = constructor_cause(ProbingWorker(), type_error(said), {"TakesRates": "cfg"})
    assert cause is not None and "takes (cfg, rate, other=0.1)" in cause.text
    assert "must need nothing but cfg" in cause.text
    assert constructor_cause(ProbingWorker(), type_error(said), {}) is None


def test_no_cause_without_the_evidence():
    worker = ProbingWorker()
    assert constructor_cause(worker, type_error("unsupported operand type(s)"), {}) is None
    said = "Right.__init__() takes 2 positional arguments but 3 were given"
    assert constructor_cause(worker, type_error(said), {}) is None  # no misspelling, no call
    assert extra_parameters(worker, "Right", "cfg") is None
    assert extra_parameters(worker, "Misspelled", "cfg") is None


def test_parameters_with_defaults_are_named_as_the_defaults_used():
    cause = extra_parameters(ProbingWorker(), "TakesRates", "cfg")
    assert cause is not None and "uses the default other=0.1" in cause.text
    assert "rate," not in cause.text.split("uses the default")[1]


def test_star_parameters_are_named_as_given_nothing():
    cause = extra_parameters(ProbingWorker(), "TakesMore", "cfg", "it raised IndexError")
    assert cause is not None and "gets nothing in *rates and **sizes" in cause.text
    assert "uses the default" not in cause.text and "it raised IndexError" in cause.text


def test_a_build_drops_the_oldest_kept_modules_only_beyond_the_bound():
    state: dict = {}
    small = [nn.Linear(4, 4) for _ in range(3)]  # 80 bytes each
    for m in small:
        state[len(state)] = m
    probes._release(state, bound=1_000)
    assert all(state[h] is m for h, m in enumerate(small))  # within the bound: all kept
    probes._release(state, bound=170)
    assert state[0] is None and state[1] is small[1] and state[2] is small[2]
    assert len(state) == 3  # a handle stays a key: the next one is new


def test_an_inexact_count_is_told_by_the_number_alone():
    assert "float" in inexact(1234.0, 1235)
    assert "2**32" in inexact(5 + 2**32, 5)
    assert "millionth" in inexact(163_009_530, 163_009_536)
    assert inexact(1200, 1235) is None  # off by 35 in 1235: no sign of inexactness
    assert "rounded to a multiple of 1,000,000" in rounded(163_000_000, 163_009_536)
    assert rounded(1_000, 1_000_004) is None  # far off: not a rounding of it
    assert rounded(0, 12_345) is None  # nothing counted is no rounding
    assert rounded(1_230, 1_235) is None  # a multiple of 10 only: not rounded to 1,000


def test_a_size_of_the_book_config_where_the_config_asks_for_another_is_hard_coded():
    cfg = {**GPT_CONFIG_124M, "emb_dim": 8}
    expected = {"norm.scale": (8,), "head.weight": (50257, 8)}
    shapes = {"norm.scale": [768], "head.weight": [50257, 8]}
    cause = hard_coded_size(cfg, shapes, expected, "keys differ")
    assert cause is not None and "cfg['emb_dim']" in cause.text and "768" in cause.text
    assert (
        hard_coded_size(cfg, {"norm.scale": [16], "head.weight": [50257, 8]}, expected, "") is None
    )
    assert hard_coded_size(cfg, {"norm.scale": [16]}, expected, "") is None


class SizedBlock(nn.Module):
    def __init__(self, cfg, emb_dim=768):
        super().__init__()


class BlockWorker:
    """The ``constructor`` probe on a student file with this TransformerBlock (GPTModel: cfg)."""

    def __init__(self, block: type):
        self.student = types.SimpleNamespace(TransformerBlock=block, GPTModel=Right)

    def call(self, action: str, **args):
        return constructor(self.student, {}, **args)


def test_a_gpt2_size_in_a_class_taking_more_than_cfg_is_its_signature():
    cfg = {**GPT_CONFIG_124M, "emb_dim": 8}
    found = hard_coded_size(cfg, {"n.scale": [768]}, {"n.scale": (8,)}, "keys differ")
    assert found is not None
    cause = size_from_default(BlockWorker(SizedBlock), found)
    assert cause is not None and cause.key == "constructor:signature:TransformerBlock"
    assert "uses the default emb_dim=768" in cause.text and "hard-coded" not in cause.text
    assert size_from_default(BlockWorker(Right), found) is None  # cfg alone: nothing to say


def test_a_book_dropout_fed_elsewhere_is_a_dropout_in_another_place():
    found = Difference(
        "",
        "GPTModel",
        1,
        own_forward=True,
        wiring="out_head is given the output of drop_emb's call 2, where the reference's is "
        "given final_norm's output",
    )
    cause = dropout_in_another_place(found, nn.Identity())
    assert cause is not None and "drop_emb (cfg['drop_rate_emb'])" in cause.text
    wired_alike = Difference(
        "",
        "GPTModel",
        1,
        own_forward=True,
        wiring="out_head is given drop_emb's output, where the reference's is given "
        "drop_emb's output + its input",
    )
    assert dropout_in_another_place(wired_alike, nn.Identity()) is None
    assert dropout_in_another_place(Difference("", "GPTModel", 1, False), nn.Identity()) is None


def _book_calls():
    cfg = {**GPT_CONFIG_124M, "vocab_size": 11, "context_length": 4, "emb_dim": 8}
    cfg.update(n_heads=2, n_layers=1)
    model = GPTModel(cfg)
    x = torch.randint(0, 11, (1, 3))
    return model, x, dropout_calls(model, x)


def test_the_book_dropouts_calls_in_order_with_what_each_is_given():
    _, _, book = _book_calls()
    names = [name for name, _ in book]
    assert names == [
        "drop_emb",
        "trf_blocks.0.att.dropout",
        "trf_blocks.0.drop_shortcut",
        "trf_blocks.0.drop_shortcut",
    ]
    assert book[1][1] == [1, 2, 3, 3]  # the attention weights: (batch, heads, tokens, tokens)


def test_a_book_dropout_used_more_often_or_on_another_tensor_is_its_place():
    _, _, book = _book_calls()
    trace = [{"name": name, "input_shape": shape} for name, shape in book]
    assert other_uses(trace, book) is None and not in_another_order(trace, book)
    twice = [trace[0], *trace]
    cause = other_uses(twice, book)
    assert cause is not None and "drop_emb (cfg['drop_rate_emb']) 2 times" in cause.text
    context = [dict(c) for c in trace]
    context[1]["input_shape"] = [1, 3, 2, 4]  # the context vectors, not the weights
    cause = other_uses(context, book)
    assert (
        cause is not None and "(1, 3, 2, 4), where the book's gives it (1, 2, 3, 3)" in cause.text
    )
    swapped = [trace[0], trace[2], trace[1], trace[3]]
    assert other_uses(swapped, book) is None and in_another_order(swapped, book)
    renamed = [{"name": "mine", "input_shape": [1]}]
    assert other_uses(renamed, book) is None and not in_another_order(renamed, book)
