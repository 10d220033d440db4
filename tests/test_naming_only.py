"""Exercise 4.3's models that differ from the book's in names only (``grader.judge.renames``,
in the book's words ``llm_pack.checks.book_names``):
such a model loses the state-dict keys check alone, whose message says which names differ, and
its behaviour is graded with the book's weights under its own names; a model that differs in
more than names is loaded by name, as before. The reproduce snippets load the weights the same
way."""

from __future__ import annotations

import torch
from support import CORPUS, clone_of, run_snippet

from grader.judge.renames import one_to_one, renaming
from grader.pack.judge import under_student_names
from grader.worker.probes import describe_module
from llm_pack.checks import ex4_3
from llm_pack.checks.book_names import naming_only
from llm_pack.checks.gpt_reference import reference_with_rates, split_config
from llm_pack.probes import ATTRS
from reference import GPT_CONFIG_124M

RENAMED = CORPUS / "ex4_3" / "wrong_renamed_blocks.py"
RATES = {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.2, "drop_rate_attn": 0.3}
SMALL = split_config(
    {
        **GPT_CONFIG_124M,
        "vocab_size": 11,
        "context_length": 4,
        "emb_dim": 6,
        "n_heads": 2,
        "n_layers": 2,
    },
    RATES,
)


def test_a_renamed_attribute_loses_the_keys_check_only_and_says_so_once(graded):
    _, result = graded("4.3", "wrong_renamed_blocks")
    failing = [c for c in result.checks if not c.passed]
    assert [c.name for c in failing] == [
        "GPTModel has the same state_dict keys as the reference GPTModel"
    ]
    assert result.score == 9
    assert failing[0].message.startswith(
        "your state_dict names trf_blocks.* as transformer_blocks.*: the exercise asks for the "
        "book's names"
    )


def test_renamings_are_said_in_general():
    assert renaming(
        "trf_blocks.0.att.W_query.weight", "transformer_blocks.0.att.W_query.weight"
    ) == ("trf_blocks.* as transformer_blocks.*")
    assert renaming("trf_blocks.3.att.mask", "trf_blocks.3.attention.mask") == (
        "trf_blocks.*.att.* as trf_blocks.*.attention.*"
    )
    assert renaming("final_norm.scale", "final_norm.weight") == (
        "final_norm.scale as final_norm.weight"
    )
    assert renaming("trf_blocks.1.ff.layers.0.bias", "blocks.layers.1.ff.layers.0.bias") == (
        "trf_blocks.* as blocks.layers.*"
    )


def test_only_lists_of_the_same_shapes_in_the_same_order_map():
    ref = [("a.weight", (2, 3)), ("b.weight", (3, 3))]
    assert one_to_one(ref, [("x.weight", (2, 3)), ("y.weight", (3, 3))]) == {
        "a.weight": "x.weight",
        "b.weight": "y.weight",
    }
    assert one_to_one(ref, [("y.weight", (3, 3)), ("x.weight", (2, 3))]) is None  # order
    assert one_to_one(ref, [("x.weight", (2, 3))]) is None  # count
    assert one_to_one(ref, [("x.weight", (2, 3)), ("x.weight", (3, 3))]) is None  # one name twice
    assert one_to_one(ref, [("x.weight", (2, 3)), ("y.weight", None)]) is None  # not a tensor


def described(model: torch.nn.Module) -> dict:
    return describe_module(model, values=False, attrs=ATTRS)


def renamed_model():
    import importlib.util

    spec = importlib.util.spec_from_file_location("renamed_answer", RENAMED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GPTModel(SMALL)


def test_the_books_weights_load_under_the_renamed_models_names_and_give_the_books_logits():
    torch.manual_seed(0)
    oracle = reference_with_rates(SMALL).eval()
    model = renamed_model().eval()
    weights = {k: v.detach() for k, v in oracle.named_parameters()}
    mapped = under_student_names(weights, described(model))
    assert set(mapped) == {k for k, _ in model.named_parameters()}
    assert model.load_state_dict(mapped, strict=False).missing_keys == [
        f"transformer_blocks.{i}.att.mask" for i in range(2)
    ]
    x = torch.randint(0, 11, (2, 4))
    assert torch.equal(model(x), oracle(x))
    # The book's names load by name, whatever the order.
    assert under_student_names(weights, described(oracle)) is weights


def test_a_model_that_differs_in_more_than_names_is_not_mapped():
    torch.manual_seed(0)
    oracle = reference_with_rates(SMALL)
    weights = {k: v.detach() for k, v in oracle.named_parameters()}
    model = renamed_model()
    model.extra = torch.nn.Linear(6, 6)  # one more parameter: no one-to-one map
    assert under_student_names(weights, described(model)) is weights
    shapes = described(model)["shapes"]
    expected = {k: tuple(v.shape) for k, v in oracle.state_dict().items()}
    assert naming_only(expected, shapes) is None
    assert naming_only(expected, described(renamed_model())["shapes"]).startswith(
        "your state_dict names trf_blocks.* as transformer_blocks.*"
    )


def test_the_logits_snippet_loads_the_weights_under_the_renamed_models_names(tmp_path):
    folder = clone_of(tmp_path / "clone", {"4.3": RENAMED})
    example = {"cfg": SMALL, "batch": 1, "n_tokens": 3, "seed": 4}
    snippet = ex4_3.CHECKS[2].reproduce(example)  # in eval mode, the reference's logits
    assert "same: True" in run_snippet(snippet, folder)
