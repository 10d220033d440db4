"""The chapter 4 checks beyond what the corpus shows: their oracle agrees with the reference,
their counterexamples are small and their messages name the mistake, their snippets run in a
student's clone and show the failure (and show success on a correct answer), an answer that
really builds GPT-2 XL costs no memory, and the one known limit of 4.3 (dropout masks drawn in
another order) costs one point only."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import find as hypothesis_find
from support import CORPUS, ROOT, SOLUTION, grade_folder, make_submission, run_snippet

from llm_pack.checks import ex4_1, ex4_2, ex4_3
from llm_pack.checks.gpt_reference import (
    GPT2_SIZES,
    attention_count,
    feedforward_count,
    gpt2_config,
    model_count,
    reference_with_rates,
    split_config,
    trainable,
)
from llm_pack.strategies import gpt_configs, large_gpt_configs
from reference import GPT_CONFIG_124M, GPTModel, TransformerBlock

FEW = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))


# --- helpers ----------------------------------------------------------------------------------


def failed_check(result, name_part: str):
    matches = [c for c in result.checks if name_part in c.name and not c.passed]
    assert matches, f"no failing check matching {name_part!r}: {[c.name for c in result.checks]}"
    return matches[0]


# --- the oracle -------------------------------------------------------------------------------


def meta_count(module_factory) -> int:
    with torch.device("meta"):
        return trainable(module_factory())


@FEW
@given(gpt_configs())
def test_small_config_counts_equal_the_reference_built_on_meta(cfg):
    block_ff = meta_count(lambda: TransformerBlock(cfg).ff)
    block_att = meta_count(lambda: TransformerBlock(cfg).att)
    assert feedforward_count(cfg) == block_ff
    assert attention_count(cfg) == block_att
    assert model_count(cfg) == meta_count(lambda: GPTModel(cfg))


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(large_gpt_configs())
def test_large_config_counts_equal_the_reference_built_on_meta(cfg):
    assert model_count(cfg) == meta_count(lambda: GPTModel(cfg))
    assert attention_count(cfg) == meta_count(lambda: TransformerBlock(cfg).att)


def test_gpt2_sizes_have_the_books_counts():
    counts = {size: model_count(gpt2_config(size)) for size in GPT2_SIZES}
    assert counts == {
        "small": 163_009_536,
        "medium": 406_212_608,
        "large": 838_220_800,
        "xl": 1_637_792_000,
    }
    assert feedforward_count(GPT_CONFIG_124M) == 4_722_432
    assert attention_count(GPT_CONFIG_124M) == 2_360_064


def test_split_oracle_with_equal_rates_is_the_books_model():
    cfg = {
        **GPT_CONFIG_124M,
        "vocab_size": 30,
        "context_length": 6,
        "emb_dim": 8,
        "n_heads": 2,
        "n_layers": 2,
        "drop_rate": 0.3,
    }
    torch.manual_seed(1)
    book = GPTModel(cfg)
    oracle = reference_with_rates(split_config(cfg, dict.fromkeys(ex4_3.SPLIT_KEYS, 0.3)))
    oracle.load_state_dict(book.state_dict())
    x = torch.randint(0, 30, (2, 6))
    book.train(), oracle.train()
    torch.manual_seed(7)
    want = book(x)
    torch.manual_seed(7)
    assert torch.equal(oracle(x), want)


def test_split_oracle_sets_each_place_to_its_own_rate():
    cfg = split_config(
        {
            **GPT_CONFIG_124M,
            "vocab_size": 10,
            "context_length": 4,
            "emb_dim": 4,
            "n_heads": 1,
            "n_layers": 3,
        },
        {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.2, "drop_rate_attn": 0.3},
    )
    model = reference_with_rates(cfg)
    assert model.drop_emb.p == 0.1
    assert [b.drop_shortcut.p for b in model.trf_blocks] == [0.2] * 3
    assert [b.att.dropout.p for b in model.trf_blocks] == [0.3] * 3


def test_split_cases_draw_rates_in_every_order_and_wide_enough_models():
    cases = ex4_3.split_cases()
    low_emb = hypothesis_find(
        cases, lambda e: e["cfg"]["drop_rate_emb"] < e["cfg"]["drop_rate_attn"]
    )
    high_emb = hypothesis_find(
        cases, lambda e: e["cfg"]["drop_rate_emb"] > e["cfg"]["drop_rate_shortcut"]
    )
    for case in (low_emb, high_emb):
        rates = [case["cfg"][k] for k in ex4_3.SPLIT_KEYS]
        assert len(set(rates)) == 3 and "drop_rate" not in case["cfg"]
        assert case["cfg"]["emb_dim"] >= 4 and case["n_tokens"] <= case["cfg"]["context_length"]


@pytest.mark.parametrize("module", [ex4_1, ex4_2, ex4_3], ids=lambda m: m.__name__)
def test_each_exercise_is_worth_ten_points_in_uniquely_named_checks(module):
    assert sum(c.points for c in module.CHECKS) == 10
    assert len({c.name for c in module.CHECKS}) == len(module.CHECKS)


# --- counterexamples and messages -------------------------------------------------------------


def test_4_1_counterexample_is_the_smallest_config_and_names_the_mistake(graded):
    _, result = graded("4.1", "wrong_qkv_bias_always")
    check = failed_check(result, "when qkv_bias is False")
    cfg = check.counterexample
    assert (cfg["emb_dim"], cfg["n_heads"], cfg["n_layers"], cfg["qkv_bias"]) == (1, 1, 1, False)
    assert "W_query, W_key and W_value have no bias" in check.message
    assert all(c.passed for c in result.checks if "when qkv_bias is True" in c.name)


def test_4_1_mask_counting_is_named(graded):
    _, result = graded("4.1", "wrong_counts_mask_buffer")
    assert "causal mask" in failed_check(result, "when qkv_bias is False").message


def test_4_2_tied_head_and_in_place_configs_are_named(graded):
    _, tied = graded("4.2", "wrong_tied_output_head")
    check = failed_check(tied, "for any config")
    assert "output head tied" in check.message
    assert check.counterexample["emb_dim"] == 1 and check.counterexample["vocab_size"] == 2
    _, in_place = graded("4.2", "wrong_mutates_base_config")
    assert "All four configs are equal" in failed_check(in_place, "holds the four").message


def test_4_2_a_config_that_is_the_base_itself_loses_the_config_check_only(graded):
    folder, result = graded("4.2", "wrong_small_is_the_base_config")
    check = failed_check(result, "holds the four")
    assert [c.name for c in result.checks if not c.passed] == [check.name]
    assert check.message.startswith(
        "GPT2_CONFIGS['small'] is GPT_CONFIG_124M itself, not a copy: changing one changes the "
        "other; use {**GPT_CONFIG_124M, ...} or dict(GPT_CONFIG_124M)"
    )
    assert check.counterexample == "small"
    out = run_snippet(check.reproduce, folder)
    assert "same: True" in out and "a copy, not GPT_CONFIG_124M itself: False" in out


def test_4_2_the_alias_probe_sees_the_books_dict_copied_into_the_file_and_shared_values():
    from llm_pack.probes import EX4_2

    probe = EX4_2["config_alias"]
    module = load_source(
        """
        from reference import GPT_CONFIG_124M as BOOK

        GPT_CONFIG_124M = {**BOOK, "extra": [1, 2]}  # the book's dict, written in the file
        GPT2_CONFIGS = {
            "small": GPT_CONFIG_124M,
            "medium": {**GPT_CONFIG_124M, "emb_dim": 1024},  # shares the list
            "large": {**BOOK, "emb_dim": 1280},
            "xl": BOOK,
        }
        """
    )
    assert probe(module, {}, size="small") == {"is_base": True, "shared": ["extra"]}
    assert probe(module, {}, size="medium") == {"is_base": False, "shared": ["extra"]}
    assert probe(module, {}, size="large") == {"is_base": False, "shared": []}
    assert probe(module, {}, size="xl") == {"is_base": True, "shared": []}


def test_4_2_configs_not_written_earn_no_config_point(tmp_path):
    functions = (
        "\n\n\ndef total_params(cfg):\n    return 0\n\n\ndef model_size_mb(cfg):\n    return 0.0\n"
    )
    for i, (configs, says) in enumerate(
        [
            ("{}", "not done yet: GPT2_CONFIGS is still empty, as in the stub"),  # the stub's
            ("{'small': {}}", "nothing to check"),
        ]
    ):
        answer = tmp_path / f"answer{i}.py"
        answer.write_text(f"GPT2_CONFIGS = {configs}{functions}")
        folder = make_submission(tmp_path / f"sub{i}", {"4.2": answer})
        (result,) = grade_folder(folder, ["4.2"], max_examples=1).exercises
        assert result.score == 0
        assert says in failed_check(result, "left unchanged").message


def test_4_2_decimal_megabytes_are_named(graded):
    _, result = graded("4.2", "wrong_decimal_megabytes")
    assert "decimal megabytes" in failed_check(result, "model_size_mb").message


def test_4_3_counterexample_is_small_and_says_where_the_rate_acts(graded):
    _, result = graded("4.3", "wrong_attn_rate_at_shortcut")
    check = failed_check(result, "drop_rate_shortcut acts")
    ex = check.counterexample
    assert ex["cfg"]["emb_dim"] == 4 and ex["cfg"]["n_layers"] == 1
    assert ex["batch"] == 1 and ex["n_tokens"] == 1
    assert "with the attention weights (att.dropout) zeroed instead" in check.message


def test_4_3_nan_from_a_hand_written_dropout_at_rate_one_is_named(graded):
    _, result = graded("4.3", "wrong_manual_dropout_nan_at_rate_one")
    assert "contain NaN" in failed_check(result, "drop_rate_emb acts").message


# --- snippets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exercise_id", "case", "check_part"),
    [
        ("4.1", "wrong_qkv_bias_always", "when qkv_bias is False"),
        ("4.2", "wrong_tied_output_head", "for any config"),
        ("4.2", "wrong_decimal_megabytes", "model_size_mb"),
        ("4.3", "wrong_attn_rate_at_shortcut", "drop_rate_shortcut acts"),
    ],
)
def test_snippet_shows_the_failure_and_passes_on_the_solution(
    graded, solution_clone, exercise_id, case, check_part
):
    folder, result = graded(exercise_id, case)
    snippet = failed_check(result, check_part).reproduce
    assert "same: False" in run_snippet(snippet, folder)
    assert "same: True" in run_snippet(snippet, solution_clone)


def test_4_2_config_snippet_shows_the_changed_base_config(graded):
    folder, result = graded("4.2", "wrong_mutates_base_config")
    out = run_snippet(failed_check(result, "left unchanged").reproduce, folder)
    assert "same: False" in out and "GPT_CONFIG_124M unchanged: False" in out


def test_4_3_config_snippet_names_the_misnamed_key(graded):
    folder, result = graded("4.3", "wrong_drop_rate_attention_key")
    out = run_snippet(failed_check(result, "GPT_CONFIG_SPLIT_DROPOUT").reproduce, folder)
    assert "missing: {'drop_rate_attn'}" in out
    assert "unexpected: {'drop_rate_attention'}" in out


def test_4_3_eval_snippet_shows_dropout_active_in_eval_mode(graded):
    folder, result = graded("4.3", "wrong_functional_dropout_in_eval")
    out = run_snippet(failed_check(result, "in eval mode").reproduce, folder)
    assert "same: False" in out


# --- GPT-2 XL costs nothing -------------------------------------------------------------------

XL_PROBE = """
import importlib.util, resource, sys
import torch
from grader.worker.tables import for_exercise

spec = importlib.util.spec_from_file_location("answer", sys.argv[1])
answer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(answer)
xl = answer.GPT2_CONFIGS["xl"]
vm_kb = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0])
# 1 GiB more: GPT-2 XL needs 6.1 GiB; what torch loads on first use is not counted against
# the answer (torch 2.14.1+cu130 maps 264 MiB for torch._dynamo, 2.13.0+cpu 73 MiB)
limit = vm_kb * 1024 + 1024 * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
print("probe:", for_exercise("4.2")["total_params"](answer, {}, cfg=xl))
try:
    answer.total_params(dict(xl))
    print("direct: allocated")
except (MemoryError, RuntimeError):
    print("direct: refused")
"""


@pytest.mark.parametrize(
    "answer",
    [
        SOLUTION / "exercises" / "ex4_2_scaled_configs.py",
        CORPUS / "ex4_2" / "correct_instantiates_with_element_size.py",
    ],
    ids=["solution", "element_size"],
)
def test_an_answer_that_builds_gpt2_xl_is_counted_without_memory(answer, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", XL_PROBE, str(answer)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "probe: 1637792000" in proc.stdout
    # The same call outside the probe's meta device does not fit: the limit is real.
    assert "direct: refused" in proc.stdout


TENSOR_SUM_ANSWER = """
import torch
from reference import TransformerBlock


def feedforward_params(cfg):
    return torch.tensor([p.numel() for p in TransformerBlock(cfg).ff.parameters()]).sum().item()


def attention_params(cfg):
    return sum(p.numel() for p in TransformerBlock(cfg).att.parameters())
"""


def test_a_count_made_with_a_tensor_is_told_about_the_meta_device(tmp_path):
    answer = tmp_path / "tensor_sum.py"
    answer.write_text(TENSOR_SUM_ANSWER)
    folder = make_submission(tmp_path / "sub", {"4.1": answer})
    (result,) = grade_folder(folder, ["4.1"], max_examples=2).exercises
    check = failed_check(result, "feedforward_params counts")
    assert "meta tensors" in check.message and "torch.device('meta')" in check.message
    assert all(c.passed for c in result.checks if "attention_params" in c.name)


# --- the known limit of 4.3 -------------------------------------------------------------------

MANUAL_MASK_ANSWER = '''
"""Right places and rates, but a hand-written dropout that draws its mask with torch.rand_like
(nn.Dropout draws with bernoulli_), careful to zero its input at p = 1."""
import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update(drop_rate_emb=0.1, drop_rate_shortcut=0.1, drop_rate_attn=0.1)


class ManualDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return torch.zeros_like(x)
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x * keep / (1 - self.p)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"],
                                      cfg["drop_rate_attn"], cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = ManualDropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = ManualDropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1], device=idx.device))
        return self.out_head(self.final_norm(self.trf_blocks(self.drop_emb(x))))
'''


def load_source(source: str):
    spec = importlib.util.spec_from_loader("inline_answer", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(textwrap.dedent(source), module.__dict__)
    return module


def test_4_3_hand_written_dropout_loses_only_the_mask_order_point(tmp_path):
    answer = tmp_path / "manual.py"
    answer.write_text(textwrap.dedent(MANUAL_MASK_ANSWER))
    folder = make_submission(tmp_path / "sub", {"4.3": answer})
    (result,) = grade_folder(folder, ["4.3"]).exercises
    failing = [c.name for c in result.checks if not c.passed]
    assert failing == [ex4_3.CHECKS[-1].name]
    assert result.score == 9


def test_hand_written_dropout_answer_is_right_where_masks_do_not_matter():
    """The answer above is correct up to its random masks: losing the last check is the
    grader's limit, not the answer's fault."""
    module = load_source(MANUAL_MASK_ANSWER)
    base = {
        **GPT_CONFIG_124M,
        "vocab_size": 20,
        "context_length": 5,
        "emb_dim": 8,
        "n_heads": 2,
        "n_layers": 2,
    }
    x = torch.randint(0, 20, (2, 5))
    for place in ex4_3.SPLIT_KEYS:
        cfg = split_config(base, {k: float(k == place) for k in ex4_3.SPLIT_KEYS})
        torch.manual_seed(3)
        oracle = reference_with_rates(cfg)
        model = module.GPTModel(cfg)
        model.load_state_dict(oracle.state_dict())
        for train in (False, True):
            model.train(train), oracle.train(train)
            assert torch.allclose(model(x), oracle(x), atol=1e-5)


# --- 4.3's modules are described by their shapes ----------------------------------------------


def test_4_3_modules_come_back_as_shapes_and_are_refused_as_their_values_would_be():
    from grader.worker.probes import NotPlainData, describe_module
    from llm_pack.probes import ATTRS

    model = GPTModel(
        {
            **GPT_CONFIG_124M,
            "vocab_size": 7,
            "context_length": 3,
            "emb_dim": 4,
            "n_heads": 2,
            "n_layers": 1,
        }
    )
    shapes = describe_module(model, values=False, attrs=ATTRS)
    assert "state" not in shapes
    assert shapes["shapes"] == {k: list(v.shape) for k, v in model.state_dict().items()}
    model.register_buffer("hollow", torch.empty(2, device="meta"))
    refusals = []
    for values in (True, False):
        with pytest.raises(NotPlainData) as refused:
            describe_module(model, values=values, attrs=ATTRS)
        refusals.append(str(refused.value))
    assert refusals[0] == refusals[1] and "'hollow'" in refusals[0] and "meta" in refusals[0]


def test_4_3_a_parameter_of_another_shape_is_named_by_the_keys_check(tmp_path):
    source = (SOLUTION / "exercises" / "ex4_3_split_dropout.py").read_text()
    wider = source.replace(
        'nn.Embedding(cfg["context_length"], cfg["emb_dim"])',
        'nn.Embedding(cfg["context_length"] + 1, cfg["emb_dim"])',
    )
    assert wider != source
    answer = tmp_path / "ex4_3_split_dropout.py"
    answer.write_text(wider)
    result = grade_folder(make_submission(tmp_path / "sub", {"4.3": answer}), ["4.3"])
    check = failed_check(result.exercises[0], "same state_dict keys")
    assert "pos_emb.weight has shape" in check.message and "expected" in check.message
