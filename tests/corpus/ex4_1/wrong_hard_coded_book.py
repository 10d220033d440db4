"""Returns the numbers seed 002 printed for GPT_CONFIG_124M (4,722,432 and 2,360,064)
whatever the config."""
# expect-failing: feedforward_params counts
# expect-failing: when qkv_bias is False
# expect-failing: when qkv_bias is True


def feedforward_params(cfg):
    return 4722432


def attention_params(cfg):
    return 2360064
