"""Holds and returns, as its model's weights and outputs, tensors of a subclass that runs a
shell command when unpickled (creating a marker file) and claims to equal anything. Only plain
tensors go back to the judge: the worker refuses the value and says so in the student's words (what came
back, what is expected), each check that needed it fails, and the command never runs."""

# exercise: 4.3
# expect-status: failed
# expect-message: is a Trojan, a subclass of torch.Tensor (shape (2, 2)): return a plain tensor

import os

import torch

GPT_CONFIG_SPLIT_DROPOUT = {
    "vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12,
    "n_layers": 12, "qkv_bias": False,
    "drop_rate_emb": 0.1, "drop_rate_shortcut": 0.1, "drop_rate_attn": 0.1,
}


class Trojan(torch.Tensor):
    def __reduce_ex__(self, protocol):
        return (os.system, ("touch /tmp/@MARKER@-unpickled",))

    def __eq__(self, other):
        return True


class GPTModel(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.out_head = torch.nn.Linear(2, 2, bias=False)
        # The worker reads what the module holds, not what its state_dict() says: hold one.
        self.register_buffer("payload", torch.zeros(2, 2).as_subclass(Trojan))

    def state_dict(self, *args, **kwargs):
        return {"out_head.weight": torch.zeros(2, 2).as_subclass(Trojan)}

    def forward(self, in_idx):
        return torch.zeros(*in_idx.shape, 50257).as_subclass(Trojan)


class TransformerBlock(torch.nn.Module):
    pass
