"""Reads its sizes from a translated chapter-5 config whose context key is ctx_len and whose
value is the shortened 256, not GPT-2 small's 1024."""
# seen-in: public code, find_string ids 5824264976 and 24313014540 (GPT_CONFIG_124M with
# seen-in: "ctx_len": 256)
# cause: gpt2-sizes
# cause-words: context_length, 1024
# cause-words: 256, 1024
# expect-failing: context_length = 1024

from reference import MultiHeadAttention

GPT_CONFIG_124M = {
    "vocab_size": 50257,
    "ctx_len": 256,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


def gpt2_small_attention(cfg=GPT_CONFIG_124M):
    return MultiHeadAttention(
        cfg["emb_dim"], cfg["emb_dim"], cfg["ctx_len"], cfg["drop_rate"], cfg["n_heads"]
    )
