"""Reports the count 'considering weight tying' that the chapter prints after the model's own
count: out_head's weights are subtracted, but the book's GPTModel does not tie them."""
# seen-in: Kyrkalo/research-lab src/pytorch/models/tools.py (calculate_size: total_params_gpt2 =
# seen-in: total_params - out_head)
# seen-in: public code, find_string id 9479091195 (exercise 4.2's answer quoting "Number of
# seen-in: trainable parameters considering weight tying")
# cause: tied-head
# cause-words: tied
# cause-words: tying
# cause-words: out_head
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config

from reference import GPT_CONFIG_124M, GPTModel


def _config(emb_dim, n_layers, n_heads):
    cfg = GPT_CONFIG_124M.copy()
    cfg["emb_dim"], cfg["n_layers"], cfg["n_heads"] = emb_dim, n_layers, n_heads
    return cfg


GPT2_CONFIGS = {
    "small": _config(768, 12, 12),
    "medium": _config(1024, 24, 16),
    "large": _config(1280, 36, 20),
    "xl": _config(1600, 48, 25),
}


def total_params(cfg):
    model = GPTModel(cfg)
    total = sum(p.numel() for p in model.parameters())
    total_params_gpt2 = total - sum(p.numel() for p in model.out_head.parameters())
    return total_params_gpt2


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
