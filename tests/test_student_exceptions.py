"""Exceptions in the student's code (issue 41): the report names the student's file (or a
notebook's cell) and line even when the code that raised is a shared class (imported from
``reference`` or aliased), names that class's line too, and gives a hint where the exception
is a known mistake: a config key that a class reads and the config lacks."""

from __future__ import annotations

import sys
import types

import pytest
from nbsupport import write_notebook
from support import CORPUS, ROOT, grade_folder, make_submission

from grader.judge import hints
from grader.judge.properties import explain_student_error, is_stub
from grader.result.common import hint_of, parse_message
from grader.worker.serve import describe_exception

SPLIT = {"emb_dim": 4, "context_length": 2, "n_heads": 1, "n_layers": 1, "qkv_bias": False}
SPLIT = {**SPLIT, "vocab_size": 5, "drop_rate_emb": 0.1, "drop_rate_shortcut": 0.2}
SPLIT = {**SPLIT, "drop_rate_attn": 0.3}

SHARED_RAISE = {
    "type": "KeyError",
    "message": "'drop_rate'",
    "frames": [
        {
            "file": "answer.py",
            "line": 12,
            "function": "__init__",
            "code": "self.blocks = [reference.TransformerBlock(cfg)]",
        },
        {
            "file": "reference/gpt.py",
            "line": 65,
            "function": "TransformerBlock.__init__",
            "code": 'dropout=cfg["drop_rate"],',
        },
    ],
}
OWN_RAISE = {
    "type": "KeyError",
    "message": "'drop_rate'",
    "frames": [
        {
            "file": "answer.py",
            "line": 30,
            "function": "__init__",
            "code": 'self.drop_shortcut = nn.Dropout(cfg["drop_rate"])',
        },
    ],
}


def test_the_message_names_the_students_line_and_the_shared_line_that_raised():
    said = explain_student_error(SHARED_RAISE)
    assert said == (
        "your code raised KeyError: 'drop_rate' (in answer.py, line 12, in __init__: "
        "self.blocks = [reference.TransformerBlock(cfg)]; raised in reference/gpt.py, line 65, "
        'in TransformerBlock.__init__: dropout=cfg["drop_rate"],)'
    )
    own = explain_student_error(OWN_RAISE)
    assert own.endswith(
        '(in answer.py, line 30, in __init__: self.drop_shortcut = nn.Dropout(cfg["drop_rate"]))'
    )


def test_a_not_implemented_error_raised_in_shared_code_is_no_stub():
    info = {
        "type": "NotImplementedError",
        "message": "not done yet",
        "frames": [
            {"file": "answer.py", "line": 3, "function": "f", "code": "return helper(x)"},
            {
                "file": "pkg/mod.py",
                "line": 9,
                "function": "helper",
                "code": "raise NotImplementedError('not done yet')",
            },
        ],
    }
    assert not is_stub(info)
    assert explain_student_error(info).startswith("your code raised NotImplementedError")


def test_a_missing_config_key_gets_a_hint_with_both_places_and_the_keys_the_config_has():
    example = {"cfg": SPLIT, "batch": 1}
    shared = hints.from_exception(SHARED_RAISE, example)
    assert shared.startswith(
        "your config has no 'drop_rate' (it has 'drop_rate_emb', 'drop_rate_shortcut' and "
        "'drop_rate_attn'): TransformerBlock.__init__ at reference/gpt.py, line 65 reads it."
    )
    assert "use a class of your own" in shared and "instead of TransformerBlock" in shared
    own = hints.from_exception(OWN_RAISE, example)
    assert own.startswith("the config your code was given has no 'drop_rate' (it has 'drop_rate_")
    assert 'your code reads cfg["drop_rate"] (in answer.py, line 30, in __init__)' in own
    assert "add" not in own  # the given config is the exercise's: adding to one's own fixes nothing
    # A key the answer names otherwise than the exercise: the exercise's name for it.
    att = {
        **OWN_RAISE,
        "message": "'drop_rate_att'",
        "frames": [{**OWN_RAISE["frames"][0], "code": "dropout=cfg['drop_rate_att'],"}],
    }
    told = hints.from_exception(att, example)
    assert "has no 'drop_rate_att' (it has 'drop_rate_attn'" in told
    assert "Read 'drop_rate_attn' there, the exercise's name for it" in told
    # Only the evidence of a read of that very key: any other KeyError gets no such hint.
    other = {**OWN_RAISE, "message": "'emb_dim'"}
    assert hints.from_exception(other, example) == ""
    assert hints.from_exception({**OWN_RAISE, "type": "IndexError"}, example) == ""
    plain = {**OWN_RAISE, "frames": [{**OWN_RAISE["frames"][0], "code": "x = table['drop_rate']"}]}
    assert hints.from_exception(plain, None).startswith("table has no 'drop_rate': your code")


ANSWER = """\
import reference


def build(cfg):
    return reference.TransformerBlock(cfg)


Block = reference.TransformerBlock
"""


def test_the_worker_names_the_shared_frame_and_where_an_answer_names_the_class(
    tmp_path, monkeypatch
):
    answer = tmp_path / "answer.py"
    answer.write_text(ANSWER)
    module = types.ModuleType("student_answer")
    module.__file__ = str(answer)
    exec(compile(ANSWER, str(answer), "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "student_answer", module)

    with pytest.raises(KeyError) as called:
        module.build(SPLIT)  # the student's line calls into the shared class
    frames = describe_exception(called.value, tmp_path)["frames"]
    assert [(f["file"], f["line"]) for f in frames] == [
        ("answer.py", 5),
        ("reference/gpt.py", frames[-1]["line"]),
    ]
    assert frames[-1]["function"].endswith("__init__")
    assert 'cfg["drop_rate"]' in frames[-1]["code"]

    with pytest.raises(KeyError) as aliased:
        module.Block(SPLIT)  # called as a probe calls it: no frame of the student's at all
    frames = describe_exception(aliased.value, tmp_path)["frames"]
    assert (frames[0]["file"], frames[0]["line"]) == ("answer.py", 8)
    assert frames[0]["code"] == "Block = reference.TransformerBlock"
    assert frames[-1]["file"] == "reference/gpt.py"


CASE = CORPUS / "ex4_3" / "wrong_config_without_drop_rate.py"
BOOK = (ROOT / "reference" / "gpt.py").read_text()


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), start=1) if text in line)


def failing(result) -> list:
    (exercise,) = result.exercises
    return [c for c in exercise.checks if not c.passed]


def test_a_graded_answer_gets_the_line_the_shared_line_and_the_hint(tmp_path):
    checks = failing(grade_folder(make_submission(tmp_path / "sub", {"4.3": CASE}), ["4.3"]))
    source = CASE.read_text()
    called = line_of(source, "*[reference.TransformerBlock(cfg)")
    named = line_of(source, "TransformerBlock = reference.TransformerBlock")
    raised = line_of(BOOK, 'dropout=cfg["drop_rate"]')
    assert len(checks) >= 6
    for check in checks:
        said = parse_message(check.message)
        assert said.text.startswith("your code raised KeyError: 'drop_rate' (in ex4_3_split_drop")
        assert f"line {called}, in " in said.text or f"line {named}, in <module>" in said.text
        assert f"; raised in reference/gpt.py, line {raised}, in TransformerBlock.__init__" in (
            said.text
        )
        assert hint_of(check).startswith("your config has no 'drop_rate'")
        assert f"reference/gpt.py, line {raised} reads it" in hint_of(check)


COPIED = """\
from torch import nn

import reference
from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update(
    {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.2, "drop_rate_attn": 0.3}
)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        return x


GPTModel = reference.GPTModel
"""


def test_a_copied_class_that_reads_the_old_key_is_named_in_the_students_file(tmp_path):
    answer = tmp_path / "copied.py"
    answer.write_text(COPIED)
    sub = make_submission(tmp_path / "sub", {"4.3": answer})
    checks = failing(grade_folder(sub, ["4.3"]))
    read = line_of(COPIED, 'dropout=cfg["drop_rate"]')
    alone = next(c for c in checks if "on its own" in c.name)
    said = parse_message(alone.message)
    assert f"(in ex4_3_split_dropout.py, line {read}, in __init__" in said.text
    assert hint_of(alone).startswith("the config your code was given has no 'drop_rate'")
    assert f"(in ex4_3_split_dropout.py, line {read}, in __init__)" in hint_of(alone)
    # GPTModel is the shared class itself: the line that names it, and the line that raised.
    keys = next(c for c in checks if "state_dict keys" in c.name)
    model = parse_message(keys.message)
    named = line_of(COPIED, "GPTModel =")
    assert f"(in ex4_3_split_dropout.py, line {named}, in <module>: GPTModel = " in model.text
    raised = line_of(BOOK, 'self.drop_emb = nn.Dropout(cfg["drop_rate"])')
    assert f"; raised in reference/gpt.py, line {raised}, in GPTModel.__init__" in model.text
    assert f"GPTModel.__init__ at reference/gpt.py, line {raised} reads it" in hint_of(keys)


def test_a_notebook_answer_is_told_its_cell_and_line(tmp_path):
    source = CASE.read_text()
    head, body = source.split("\nclass GPTModel", 1)
    notebook = write_notebook(
        tmp_path / "answers.ipynb",
        [
            ("markdown", "# My answers"),
            ("code", "import torch\nprint(torch.__version__)"),
            ("code", head.strip() + "\n"),
            ("code", "class GPTModel" + body, ["exercise-4.3"]),
        ],
    )
    checks = failing(grade_folder(notebook, ["4.3"]))
    cell_source = "class GPTModel" + body
    called = line_of(cell_source, "*[reference.TransformerBlock(cfg)")
    named = line_of(head.strip(), "TransformerBlock = reference.TransformerBlock")
    raised = line_of(BOOK, 'dropout=cfg["drop_rate"]')
    texts = [parse_message(c.message) for c in checks]
    told = [hint_of(c) for c in checks]
    assert any(f"(in cell 4, line {called}, in " in t.text for t in texts), texts
    assert any(f"(in cell 3, line {named}, in <module>: " in t.text for t in texts), texts
    for said, hint in zip(texts, told, strict=True):
        assert "ex4_3_split_dropout.py" not in said.text + hint
        assert f"raised in reference/gpt.py, line {raised}" in said.text
        assert hint.startswith("your config has no 'drop_rate'")


def test_a_comprehension_is_named_by_its_function_on_every_python(tmp_path):
    """Python 3.12 runs a list comprehension in its function's frame (PEP 709); 3.10 and 3.11
    give it a frame of its own. The student is told the same frames on every Python."""
    from grader.worker.frames import student_frames

    student = tmp_path / "answer.py"
    student.write_text("def build(cfg):\n    return [cfg['missing'] for _ in range(2)]\n")
    namespace: dict = {}
    exec(compile(student.read_text(), str(student), "exec"), namespace)
    try:
        namespace["build"]({})
    except KeyError as exc:
        frames = student_frames(exc, tmp_path)
    assert [(f["function"], f["line"]) for f in frames] == [("build", 2)]


def test_a_name_the_file_lacks_is_said_as_that_with_the_near_spelling(tmp_path):
    """A probe's lookup of a name the student's file does not define: not "your code raised
    AttributeError: module 'student_ex3_2' ...", but the file, the name, and a near spelling."""
    solution = (ROOT / "tests" / "submissions" / "solution" / "exercises").glob("ex3_2_*.py")
    source = next(solution).read_text().replace("def make_2d_wrapper(", "def make_2d_wraper(")
    answer = tmp_path / "renamed.py"
    answer.write_text(source)
    checks = failing(grade_folder(make_submission(tmp_path / "sub", {"3.2": answer}), ["3.2"]))
    assert checks
    for check in checks:
        said = parse_message(check.message).text
        assert "ex3_2_wrapper_2d.py defines no make_2d_wrapper, which the exercise asks for" in (
            said
        ), said
        assert "(it defines make_2d_wraper: is that one meant?)" in said
        assert "student_ex" not in check.message and "AttributeError" not in check.message


def test_an_attribute_error_of_the_students_own_line_stays_the_students(tmp_path):
    """Only a lookup outside the student's lines is a missing name: the student's own
    ``AttributeError`` (their frames say where) is reported as raised by their code."""
    module = types.ModuleType("student_ex3_2")
    try:
        module.make_2d_wrapper  # noqa: B018 - the lookup a probe makes
    except AttributeError as exc:
        probe = describe_exception(exc, tmp_path)  # no frame of the student's: a probe's lookup
        own = describe_exception(exc, ROOT)  # this line is the "student's"
    assert probe["refused"]
    assert probe["message"] == "your file defines no make_2d_wrapper, which the exercise asks for"
    assert not own.get("refused") and own["frames"]
    assert explain_student_error(own).startswith("your code raised AttributeError")
