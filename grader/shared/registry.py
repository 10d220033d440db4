"""The six exercises: ids, the student file each lives in, titles and default points."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    id: str
    filename: str
    title: str
    names: tuple[str, ...]  # what the student's file must define (DESIGN §4)
    max_score: float = 10.0
    # Seconds to grade the solution, the mean of a cold judge's time (``GRADER_TIMINGS``) and a
    # warm one's (examples replayed, as in a notebook's check_all()): balances exercises over
    # processes. Measured on the 2-core machine of bench/; only the ratios matter.
    cost: float = 1.0

    @property
    def module(self) -> str:
        """The check module's name under ``grader.judge.checks`` (``"3.1"`` -> ``"ex3_1"``)."""
        return "ex" + self.id.replace(".", "_")


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "3.1",
        "ex3_1_weight_transfer.py",
        "Weight transfer from SelfAttention_v2 to v1",
        ("transfer_weights",),
        cost=0.06,
    ),
    Exercise(
        "3.2",
        "ex3_2_wrapper_2d.py",
        "Two-head wrapper with 2-D context vectors",
        ("make_2d_wrapper",),
        cost=0.10,
    ),
    Exercise(
        "3.3",
        "ex3_3_gpt2_attention.py",
        "GPT-2-small-sized multi-head attention",
        ("gpt2_small_attention",),
        cost=0.29,
    ),
    Exercise(
        "4.1",
        "ex4_1_parameter_counts.py",
        "Parameters in feed-forward vs attention",
        ("feedforward_params", "attention_params"),
        cost=0.06,
    ),
    Exercise(
        "4.2",
        "ex4_2_scaled_configs.py",
        "Larger GPT-2 configs and their sizes",
        ("GPT2_CONFIGS", "total_params", "model_size_mb"),
        cost=0.14,
    ),
    Exercise(
        "4.3",
        "ex4_3_split_dropout.py",
        "Separate dropout rates",
        ("GPT_CONFIG_SPLIT_DROPOUT", "TransformerBlock", "GPTModel"),
        cost=0.26,
    ),
)

BY_ID: dict[str, Exercise] = {e.id: e for e in EXERCISES}


def select(ids: list[str] | None) -> list[Exercise]:
    """The exercises named by ``ids`` (all when empty), in course order.

    Raises ``KeyError`` naming the first unknown id.
    """
    if not ids:
        return list(EXERCISES)
    for i in ids:
        if i not in BY_ID:
            raise KeyError(i)
    return [e for e in EXERCISES if e.id in set(ids)]
