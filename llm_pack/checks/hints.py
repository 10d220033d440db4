"""The first pack's hints for known kinds of failure (``pack.toml``: ``hints``), tried before
the grader's own (``grader.judge.hints.KNOWN``): the wrong counts of chapter 4's parameter
exercises (4.1, 4.2) that ``gpt_reference.wrong_count`` recognises, a count returned as a
tensor, and the book's words for a parameter assigned a plain tensor (3.1) and an attention
module the judge cannot rebuild as the book's class (3.2, 3.3)."""

from grader.pack import judge as hints

KNOWN: tuple[hints.Known, ...] = (
    hints.Known(
        "raised:TypeError",
        "PyTorch only lets an nn.Parameter (or None) replace an nn.Parameter attribute of a "
        "module: assign nn.Parameter(tensor), or copy into the existing parameter in place "
        "under torch.no_grad() (e.g. sa_v1.W_query.copy_(...)).",
        r"cannot assign .* as parameter",
    ),
    hints.Known(
        "type:Tensor",
        "return a plain Python number (an int for a count): sum(p.numel() for p in "
        "module.parameters()) is already one; a tensor's .item() gives one too.",
    ),
    hints.Known(
        "count:mask",
        "the causal mask is registered with register_buffer: it is in state_dict() but it is "
        "not a parameter. Count module.parameters() (or leave the mask out of a formula).",
    ),
    hints.Known(
        "count:bias",
        "every nn.Linear here has a bias (out_features values) unless it is built with "
        "bias=False; module.parameters() yields weights and biases alike.",
    ),
    hints.Known(
        "count:qkv-bias",
        "W_query, W_key and W_value have biases exactly when cfg['qkv_bias'] is True: read "
        "it from cfg instead of assuming either way.",
    ),
    hints.Known(
        "count:tied-head",
        "the book's GPTModel does not tie its output head to the token embedding: out_head "
        "has vocab_size * emb_dim weights of its own, counted besides tok_emb's.",
    ),
    hints.Known(
        "count:ignores-cfg",
        "read every size from cfg (emb_dim, n_heads, context_length, qkv_bias, ...): the "
        "grader calls your function with many configs, not only GPT_CONFIG_124M.",
    ),
    hints.Known(
        "count:twice",
        "module.parameters() yields each parameter once: count each part of the module once "
        "(a formula adds each layer's term once).",
    ),
    hints.Known(
        "count:left-out",
        "module.parameters() yields every parameter of every submodule: count them all (or "
        "follow the module's layers one by one in a formula).",
    ),
    hints.Known(
        hints.STRUCTURE,
        "the grader rebuilds the book's class from your module's state_dict() and "
        "attributes: return the book's class (from reference import ...) or an unchanged copy "
        "that keeps its attribute names and buffers.",
    ),
)
