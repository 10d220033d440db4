"""Counts the parameters right and divides the bytes by 1e6, the decimal megabyte that model
summaries often print, where the exercise's MB is 1024 * 1024 bytes."""
# seen-in: public code, find_string ids 16273216962 and 54199203731 (model size printed as
# seen-in: total_params * 4 / 1e6 MB)
# cause: decimal-mb
# cause-words: 1024
# cause-words: MiB
# expect-failing: model_size_mb is the parameter count times 4 bytes, in MB of 1024 * 1024 bytes

from reference import GPT_CONFIG_124M, GPTModel

SIZES = {
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
    "large": (1280, 36, 20),
    "xl": (1600, 48, 25),
}
GPT2_CONFIGS = {}
for name, (emb_dim, n_layers, n_heads) in SIZES.items():
    cfg = dict(GPT_CONFIG_124M)
    cfg.update(emb_dim=emb_dim, n_layers=n_layers, n_heads=n_heads)
    GPT2_CONFIGS[name] = cfg


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    total_size_bytes = total_params(cfg) * 4
    return total_size_bytes / 1e6
