"""Builds its models with the grader's own helpers (llm_pack.checks.gpt_reference), which
compute what the checks expect; no answer may import them: every worker refuses it."""
# expect-failing: state_dict keys
# expect-message: imports the grader's checks: llm_pack.checks

from llm_pack.checks import gpt_reference
from reference import GPT_CONFIG_124M

GPT_CONFIG_SPLIT_DROPOUT = gpt_reference.split_config(
    GPT_CONFIG_124M, {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.1, "drop_rate_attn": 0.1}
)


def GPTModel(cfg):  # noqa: N802 - a class's name, as the exercise asks
    return gpt_reference.reference_with_rates(cfg)


def TransformerBlock(cfg):  # noqa: N802
    return gpt_reference.set_block_rates(
        GPTModel({**cfg, "n_layers": 1}).trf_blocks[0], cfg
    )
