"""The instructor solution and every correct alternative in the corpus, checked directly
against the reference models without the grader, so that they are known to be right
independently of the checks that grade them."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest
import torch
from support import CORPUS, SOLUTION

from grader.shared.registry import EXERCISES
from reference import (
    GPT_CONFIG_124M,
    GPTModel,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
    TransformerBlock,
)


def correct_answers(exercise_module: str) -> list[Path]:
    ex = next(e for e in EXERCISES if e.module == exercise_module)
    return [SOLUTION / "exercises" / ex.filename] + sorted(
        (CORPUS / exercise_module).glob("correct_*.py")
    )


_counter = itertools.count()


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"answer_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ids(paths):
    return [f"{p.parent.name}/{p.stem}" for p in paths]


def params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


@pytest.mark.parametrize("path", correct_answers("ex3_1"), ids=ids(correct_answers("ex3_1")))
@pytest.mark.parametrize(("d_in", "d_out", "n"), [(3, 2, 6), (1, 4, 1), (5, 5, 3), (4, 1, 7)])
def test_3_1(path, d_in, d_out, n):
    answer = load(path)
    torch.manual_seed(d_in * 10 + d_out)
    sa_v2, sa_v1 = SelfAttention_v2(d_in, d_out), SelfAttention_v1(d_in, d_out)
    x = torch.rand(n, d_in)
    before = {k: v.clone() for k, v in sa_v2.state_dict().items()}
    answer.transfer_weights(sa_v2, sa_v1)
    assert torch.allclose(sa_v1(x), sa_v2(x), atol=1e-6)
    assert all(torch.equal(before[k], v) for k, v in sa_v2.state_dict().items())
    sa_v1(x).sum().backward()
    for name in ("W_query", "W_key", "W_value"):
        assert dict(sa_v1.named_parameters())[name].grad is not None


@pytest.mark.parametrize("path", correct_answers("ex3_2"), ids=ids(correct_answers("ex3_2")))
@pytest.mark.parametrize(("d_in", "context", "dropout", "n"), [(3, 6, 0.0, 6), (7, 4, 0.3, 2)])
def test_3_2(path, d_in, context, dropout, n):
    m = load(path).make_2d_wrapper(d_in, context, dropout)
    assert len(m.heads) == 2
    assert all(h.dropout.p == dropout and h.mask.shape == (context, context) for h in m.heads)
    bias = m.heads[0].W_query.bias is not None  # qkv_bias is not part of the task
    ref = MultiHeadAttentionWrapper(d_in, 1, context, dropout, num_heads=2, qkv_bias=bias)
    ref.load_state_dict(m.state_dict())
    x = torch.rand(3, n, d_in)
    m.eval(), ref.eval()
    out = m(x)
    assert out.shape == (3, n, 2)
    assert torch.allclose(out, ref(x), atol=1e-6)


@pytest.mark.parametrize("path", correct_answers("ex3_3"), ids=ids(correct_answers("ex3_3")))
def test_3_3(path):
    m = load(path).gpt2_small_attention().eval()
    assert m.num_heads == 12 and m.mask.shape == (1024, 1024)
    assert (m.W_query.in_features, m.out_proj.out_features) == (768, 768)
    ref = MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12, qkv_bias=m.W_query.bias is not None)
    ref.load_state_dict(m.state_dict())
    ref.eval()
    for n in (1, 1024):
        x = torch.rand(1, n, 768)
        assert torch.allclose(m(x), ref(x), atol=1e-5)


CONFIGS = [
    GPT_CONFIG_124M,
    {**GPT_CONFIG_124M, "emb_dim": 30, "n_heads": 5, "qkv_bias": True, "context_length": 7},
    {**GPT_CONFIG_124M, "emb_dim": 4, "n_heads": 1, "n_layers": 3, "vocab_size": 11},
]


@pytest.mark.parametrize("path", correct_answers("ex4_1"), ids=ids(correct_answers("ex4_1")))
def test_4_1(path):
    answer = load(path)
    for cfg in CONFIGS:
        with torch.device("meta"):
            block = TransformerBlock(cfg)
        assert answer.feedforward_params(dict(cfg)) == params(block.ff)
        assert answer.attention_params(dict(cfg)) == params(block.att)


@pytest.mark.parametrize("path", correct_answers("ex4_2"), ids=ids(correct_answers("ex4_2")))
def test_4_2(path):
    answer = load(path)
    sizes = {
        "small": (768, 12, 12),
        "medium": (1024, 24, 16),
        "large": (1280, 36, 20),
        "xl": (1600, 48, 25),
    }
    assert set(answer.GPT2_CONFIGS) == set(sizes)
    for name, (emb, layers, heads) in sizes.items():
        expected = {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}
        assert answer.GPT2_CONFIGS[name] == expected
    for cfg in [*answer.GPT2_CONFIGS.values(), *CONFIGS]:
        with torch.device("meta"):
            expected = params(GPTModel(cfg))
            assert answer.total_params(dict(cfg)) == expected
            assert answer.model_size_mb(dict(cfg)) == pytest.approx(expected * 4 / 1024**2)


def split(cfg: dict, emb: float, shortcut: float, attn: float) -> dict:
    out = {k: v for k, v in cfg.items() if k != "drop_rate"}
    return {**out, "drop_rate_emb": emb, "drop_rate_shortcut": shortcut, "drop_rate_attn": attn}


def reference_with_rates(cfg: dict, emb: float, shortcut: float, attn: float) -> GPTModel:
    model = GPTModel({**cfg, "drop_rate": 0.0})
    model.drop_emb.p = emb
    for block in model.trf_blocks:
        block.drop_shortcut.p, block.att.dropout.p = shortcut, attn
    return model


@pytest.mark.parametrize("path", correct_answers("ex4_3"), ids=ids(correct_answers("ex4_3")))
def test_4_3(path):
    answer = load(path)
    expected_keys = (set(GPT_CONFIG_124M) - {"drop_rate"}) | {
        "drop_rate_emb",
        "drop_rate_shortcut",
        "drop_rate_attn",
    }
    assert set(answer.GPT_CONFIG_SPLIT_DROPOUT) == expected_keys
    cfg = {
        **GPT_CONFIG_124M,
        "vocab_size": 40,
        "context_length": 9,
        "emb_dim": 12,
        "n_heads": 3,
        "n_layers": 2,
        "qkv_bias": True,
    }
    ids_ = torch.randint(0, 40, (2, 9), generator=torch.Generator().manual_seed(1))
    for rates in [(0.3, 0.2, 0.5), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]:
        ref = reference_with_rates(cfg, *rates)
        model = answer.GPTModel(split(cfg, *rates))
        assert set(model.state_dict()) == set(ref.state_dict())
        model.load_state_dict(ref.state_dict())
        model.eval(), ref.eval()
        assert torch.allclose(model(ids_), ref(ids_), atol=1e-5)
        model.train(), ref.train()
        torch.manual_seed(5)
        got = model(ids_)
        torch.manual_seed(5)
        assert torch.allclose(got, ref(ids_), atol=1e-5), rates
