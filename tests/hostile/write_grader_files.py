"""Tries to change the grader and the reference models (so that wrong answers would pass),
and the installed torch. Gives correct answers; the test checks that no file changed."""

# exercise: 4.2
# expect-status: passed
# needs: mount|landlock

from pathlib import Path

import grader
import reference
import torch
from reference import GPT_CONFIG_124M, GPTModel

for target in (
    Path(reference.__file__),
    Path(grader.__file__),
    Path(grader.__file__).parent / "judge" / "engine.py",
    Path(grader.__file__).parent / "judge" / "properties.py",
    Path(torch.__file__),
    Path(grader.__file__).parent / "judge" / "checks" / "@MARKER@.py",
):
    try:
        with open(target, "a") as f:
            f.write("\n# @MARKER@\n")
    except OSError:
        pass

_SIZES = {"small": (768, 12, 12), "medium": (1024, 24, 16), "large": (1280, 36, 20),
          "xl": (1600, 48, 25)}
GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}
    for name, (emb, layers, heads) in _SIZES.items()
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
