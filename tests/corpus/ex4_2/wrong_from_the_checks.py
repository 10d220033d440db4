"""Takes the configs and the counts from the grader's own checks (llm_pack.checks), which no
answer may import: every worker refuses it, with one line naming the import."""
# expect-failing: GPT2_CONFIGS
# expect-message: imports the grader's checks: llm_pack.checks

from llm_pack.checks.gpt_reference import gpt2_config, model_count

GPT2_CONFIGS = {size: gpt2_config(size) for size in ("small", "medium", "large", "xl")}


def total_params(cfg):
    return model_count(cfg)


def model_size_mb(cfg):
    return model_count(cfg) * 4 / (1024 * 1024)
