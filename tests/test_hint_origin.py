"""Each pack's words its own (issue 57): a hint shown to a pack's students is the pack's or one of
the grader's generic ones (``grader.authoring.hint_origin``), and ``grade check-pack`` fails a
pack whose corpus shows another pack's words.

Two packs: the first (``llm_pack``, chapters 3-4) and the LoRA pack (``tests/lora_pack``,
appendix E). The grader's own hints name neither's classes, configs or code.
"""

from __future__ import annotations

import re
import shutil

import pytest
from support import ROOT
from test_pack_authoring import grade

from grader.authoring import hint_origin
from grader.judge.hints import KNOWN
from llm_pack.checks.hints import KNOWN as BOOK_KNOWN

LORA = ROOT / "tests" / "lora_pack"
LLM = ROOT / "llm_pack"


def lora_sources() -> hint_origin.Sources:
    return hint_origin.sources("lora-course", LORA / "lora_pack", {"llm-ch3-4": LLM})


def test_the_first_packs_hints_are_not_the_lora_packs_words():
    found = lora_sources()
    for known in BOOK_KNOWN:
        assert found.writer(known.hint) == "llm-ch3-4"
        assert "llm-ch3-4's words, not this pack's" in str(found.problem(known.hint))


def test_a_packs_own_hints_and_the_graders_generic_ones_pass():
    found = lora_sources()
    own = [
        "A has shape (in_dim, rank), B (rank, out_dim); return alpha * (x @ A @ B)",
        # an f-string's literal parts are the pack's words too
        "keep the layer as self.linear, the LoRA layer as self.lora, with A (in_dim x rank) "
        "and B (rank x out_dim), as the book does",
    ]
    for hint in own:
        assert found.writer(hint) == "lora-course" and found.problem(hint) is None
    for known in KNOWN:
        assert found.writer(known.hint) == hint_origin.GRADER and found.problem(known.hint) is None
    # the grader's generic diagnosis, with the student's names in it
    said = "rename __int__ to __init__ (two underscores on each side of init)."
    assert found.problem(said) is None
    assert found.problem("words nobody here ever wrote, in no module at all") is not None


def test_the_graders_hints_name_no_packs_classes_configs_or_code():
    book = re.compile(r"numel\(\)|GPT|attention|cfg\[|book|W_query|trf_blocks|LoRA", re.I)
    assert [k.hint for k in KNOWN if book.search(k.hint)] == []


@pytest.mark.slow
def test_check_pack_fails_a_pack_whose_corpus_shows_another_packs_hint(tmp_path):
    """The LoRA pack, copied as ``borrowed_pack``, with one structure hint taken from the first
    pack's words: its corpus answers that fail on the module's structure are shown them, and
    check-pack fails on each (the header of one expects those words: it fails on nothing
    else)."""
    copy = tmp_path / "lora"
    shutil.copytree(LORA, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "lora_pack").rename(copy / "borrowed_pack")
    for path in [*copy.rglob("*.py"), *copy.rglob("*.toml")]:
        text = path.read_text(encoding="utf-8").replace("lora_pack", "borrowed_pack")
        path.write_text(text.replace('name = "lora-course"', 'name = "borrowed"'), "utf-8")
    checks = copy / "borrowed_pack" / "checks.py"
    text = checks.read_text(encoding="utf-8")
    own = 'structure_hint=f"keep the layer as self.linear, the LoRA layer as self.lora, {SHAPES}",'
    assert own in text
    borrowed = (
        "from llm_pack.checks.hints import KNOWN as BOOK\n"
        "BORROWED = next(k.hint for k in BOOK if k.kind == 'structure')\n"
    )
    text = text.replace(own, "structure_hint=BORROWED,").replace(
        "\nLORA_HINT", borrowed + "LORA_HINT"
    )
    checks.write_text(text, encoding="utf-8")
    wrong = copy / "corpus" / "exE_1" / "wrong_lora_named_adapter.py"
    header = "# expect-hint: keep the layer as self.linear, the LoRA layer as self.lora"
    wrong.write_text(
        wrong.read_text(encoding="utf-8").replace(
            header, "# expect-hint: the grader rebuilds the book's class"
        ),
        encoding="utf-8",
    )
    proc = grade("check-pack", str(copy / "borrowed_pack"), "--mutants", "0", cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    origin = "a hint shown is llm-ch3-4's words, not this pack's"
    assert f"wrong_lora_named_adapter.py: {origin}" in proc.stdout, proc.stdout
    assert f"wrong_transposed_weights.py: {origin}" in proc.stdout  # a structure failure too
    assert "corpus     FAIL" in proc.stdout
