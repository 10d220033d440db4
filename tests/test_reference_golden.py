"""Golden tests: the reference models reproduce the outputs printed in the book's notebooks
(the seeds), to the four decimals printed there, and the book's parameter counts."""

import pytest
import torch

from reference import (
    GPT_CONFIG_124M,
    GPTModel,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
    TransformerBlock,
)

# "Your journey starts with one step", as 3-d embeddings (chapter 3).
INPUTS = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
)
BATCH = torch.stack((INPUTS, INPUTS), dim=0)


def assert_printed(actual: torch.Tensor, printed: list) -> None:
    """Equal to the values as printed with four decimals (any changed digit fails)."""
    expected = torch.tensor(printed)
    assert actual.shape == expected.shape
    assert torch.equal((actual.detach() * 1e4).round(), (expected * 1e4).round()), actual


def test_self_attention_v1_seed_123():
    torch.manual_seed(123)
    out = SelfAttention_v1(3, 2)(INPUTS)
    assert_printed(
        out,
        [
            [0.2996, 0.8053],
            [0.3061, 0.8210],
            [0.3058, 0.8203],
            [0.2948, 0.7939],
            [0.2927, 0.7891],
            [0.2990, 0.8040],
        ],
    )


def test_self_attention_v2_seed_789():
    torch.manual_seed(789)
    out = SelfAttention_v2(3, 2)(INPUTS)
    assert_printed(
        out,
        [
            [-0.0739, 0.0713],
            [-0.0748, 0.0703],
            [-0.0749, 0.0702],
            [-0.0760, 0.0685],
            [-0.0763, 0.0679],
            [-0.0754, 0.0693],
        ],
    )


def test_wrapper_two_heads_d_out_2_seed_123():
    torch.manual_seed(123)
    out = MultiHeadAttentionWrapper(3, 2, BATCH.shape[1], 0.0, num_heads=2)(BATCH)
    rows = [
        [-0.4519, 0.2216, 0.4772, 0.1063],
        [-0.5874, 0.0058, 0.5891, 0.3257],
        [-0.6300, -0.0632, 0.6202, 0.3860],
        [-0.5675, -0.0843, 0.5478, 0.3589],
        [-0.5526, -0.0981, 0.5321, 0.3428],
        [-0.5299, -0.1081, 0.5077, 0.3493],
    ]
    assert_printed(out, [rows, rows])


def test_wrapper_two_heads_d_out_1_seed_123():
    torch.manual_seed(123)
    out = MultiHeadAttentionWrapper(3, 1, BATCH.shape[1], 0.0, num_heads=2)(BATCH)
    rows = [
        [-0.5740, 0.2216],
        [-0.7320, 0.0155],
        [-0.7774, -0.0546],
        [-0.6979, -0.0817],
        [-0.6538, -0.0957],
        [-0.6424, -0.1065],
    ]
    assert_printed(out, [rows, rows])


def test_multi_head_attention_seed_123():
    torch.manual_seed(123)
    out = MultiHeadAttention(3, 2, BATCH.shape[1], 0.0, num_heads=2)(BATCH)
    rows = [
        [0.3190, 0.4858],
        [0.2943, 0.3897],
        [0.2856, 0.3593],
        [0.2693, 0.3873],
        [0.2639, 0.3928],
        [0.2575, 0.4028],
    ]
    assert_printed(out, [rows, rows])


def test_parameter_creation_order_matches_the_book():
    # The book seeds 123 and draws W_query first: its first row prints as [0.2961, 0.5166].
    torch.manual_seed(123)
    sa = SelfAttention_v1(3, 2)
    assert_printed(sa.W_query[0], [0.2961, 0.5166])


def count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_gpt_124m_parameter_count_on_meta():
    with torch.device("meta"):
        model = GPTModel(GPT_CONFIG_124M)
    assert next(model.parameters()).device.type == "meta"
    assert count(model) == 163_009_536


def test_block_feedforward_and_attention_counts_on_meta():
    with torch.device("meta"):
        block = TransformerBlock(GPT_CONFIG_124M)
    assert count(block.ff) == 4_722_432
    assert count(block.att) == 2_360_064
    assert "mask" not in dict(block.att.named_parameters())


@pytest.mark.parametrize(
    ("emb_dim", "n_layers", "n_heads", "total"),
    [
        (768, 12, 12, 163_009_536),
        (1024, 24, 16, 406_212_608),
        (1280, 36, 20, 838_220_800),
        (1600, 48, 25, 1_637_792_000),
    ],
)
def test_gpt2_sizes_on_meta(emb_dim, n_layers, n_heads, total):
    cfg = {**GPT_CONFIG_124M, "emb_dim": emb_dim, "n_layers": n_layers, "n_heads": n_heads}
    with torch.device("meta"):
        assert count(GPTModel(cfg)) == total


def test_gpt_model_forward_shape_and_names():
    cfg = {
        **GPT_CONFIG_124M,
        "vocab_size": 50,
        "context_length": 8,
        "emb_dim": 12,
        "n_heads": 3,
        "n_layers": 2,
    }
    torch.manual_seed(0)
    model = GPTModel(cfg).eval()
    logits = model(torch.randint(0, 50, (2, 5)))
    assert logits.shape == (2, 5, 50)
    names = {n for n, _ in model.named_parameters()}
    for expected in (
        "tok_emb.weight",
        "pos_emb.weight",
        "trf_blocks.0.att.W_query.weight",
        "trf_blocks.1.ff.layers.2.bias",
        "trf_blocks.0.norm1.scale",
        "final_norm.shift",
        "out_head.weight",
    ):
        assert expected in names
