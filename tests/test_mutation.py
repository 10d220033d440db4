"""The mutation testing of the checks (the grader's engine, ``grader.authoring.mutation``, and
``bench/mutate.py`` over it) keeps working: its mutants are valid one-change modules, each
operator makes the mutant it should (the ``config`` operator only with a course's vocabulary),
a capped run spreads its mutants over the file, and the grader kills the mutants that were
holes before a check was added: a fixed handful of 3.2's, the changed default dropout among
them; heads that are one module (3.2); a block that swaps its LayerNorms (4.3)."""

from __future__ import annotations

import ast
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT, TEST_MAX_EXAMPLES

from grader.shared.registry import BY_ID, EXERCISES

sys.path.insert(0, str(ROOT / "bench"))

import mutate  # noqa: E402

from grader.authoring.mutants import Mutant, mutants  # noqa: E402
from grader.authoring.mutops import NEW_KINDS  # noqa: E402

SPLIT = ("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn")

# The 3.2 mutants graded here, by description: every changed default, a swapped argument and a
# dropped return value.
GRADED_3_2 = (
    "the default of dropout removed",
    "0.0 -> 1.0",
    "0.0 -> -1.0",
    "0.0 -> 0.1",
    "arguments 3 and 4 swapped",
    "return None instead of",
)


def solution_mutants() -> st.SearchStrategy[Mutant]:
    """Any mutant of any of the six solutions (made when the test first draws one, not when
    the module is collected: each test process collects it, one runs it)."""
    return st.deferred(
        lambda: st.sampled_from([m for e in EXERCISES for m in mutate.exercise_mutants(e.id)])
    )


def small_functions() -> st.SearchStrategy[str]:
    """A small module: one function with a default, arithmetic, a comparison and a call."""
    names = st.sampled_from(["a", "b", "rate"])
    numbers = st.integers(min_value=0, max_value=9)
    return st.builds(
        lambda x, n, m, op: (
            f'"""Doc."""\nimport math\n\n\ndef f({x}, y={n}):\n'
            f'    """Doc."""\n    if {x} {op} y:\n        return math.pow({x} * {m}, y)\n'
            f"    return y.T\n"
        ),
        names,
        numbers,
        numbers,
        st.sampled_from(["<", "==", ">="]),
    )


@pytest.fixture(scope="module")
def graded_3_2() -> list[mutate.Verdict]:
    """The chosen 3.2 mutants, graded in this process as ``bench/mutate.py -e 3.2`` grades."""
    chosen = [
        (i, m)
        for i, m in enumerate(mutate.exercise_mutants("3.2"))
        if m.description.startswith(GRADED_3_2)
    ]
    jobs = [("3.2", BY_ID["3.2"].filename, i, m, None, TEST_MAX_EXAMPLES) for i, m in chosen]
    return mutate.run(jobs)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(solution_mutants())
def test_a_mutant_is_a_valid_module_with_one_change(mutant):
    assert mutant.source != mutant.original
    compile(mutant.source, "<mutant>", "exec")
    assert mutant.diff().count("@@ ") == 1, mutant.diff()  # one change: one hunk


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(small_functions())
def test_docstrings_and_imports_are_never_mutated(source):
    for mutant in mutants(source):
        tree = ast.parse(mutant.source)
        assert ast.get_docstring(tree) == "Doc."
        assert isinstance(tree.body[1], ast.Import)
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert not functions or ast.get_docstring(functions[0]) == "Doc."


def test_the_operators_the_mutator_promises_are_found():
    kinds = {m.kind for e in EXERCISES for m in mutate.exercise_mutants(e.id)}
    assert kinds >= {"operator", "compare", "constant", "default", "transpose", "swap"}
    assert kinds >= {"keyword", "return", "statement"}
    found = {m.description for m in mutate.exercise_mutants("3.2")}
    assert all(any(d.startswith(prefix) for d in found) for prefix in GRADED_3_2)


def test_the_unmutated_solution_passes_as_the_mutants_are_graded():
    original = mutate.exercise_mutants("3.2")[0].original
    assert mutate.grade_source("3.2", original, max_examples=TEST_MAX_EXAMPLES) == ("passed", ())


def test_the_chosen_3_2_mutants_are_killed(graded_3_2):
    assert len(graded_3_2) == len(GRADED_3_2)
    survivors = [f"{v.description}\n{v.diff}" for v in graded_3_2 if not v.killed]
    assert not survivors, "\n".join(survivors)


def test_a_changed_default_dropout_is_killed_by_the_default_check(graded_3_2):
    defaults = [v for v in graded_3_2 if v.kind == "default"]
    assert len(defaults) == 4
    for verdict in defaults:
        assert any("called without dropout" in name for name in verdict.failing), verdict


def test_the_score_table_counts_killed_and_survived(graded_3_2):
    survivor = mutate.Verdict(
        "3.1", "x.py", 0, "constant", "1 -> 2", 3, False, "passed", (), 0.1, "d"
    )
    table = mutate.score_table([*graded_3_2, survivor], ["3.1", "3.2"])
    assert "| 3.1 | 1 | 0 | 1 | 0.0 % |" in table
    assert f"| 3.2 | {len(GRADED_3_2)} | {len(GRADED_3_2)} | 0 | 100.0 % |" in table
    assert "| total |" in table
    assert "x.py #0 line 3 [constant] 1 -> 2" in mutate.survivors_text([survivor])
    book = mutate.Verdict(
        "3.1", "seed_style/x.py", 0, "alias", "d", 3, True, "failed", ("c",), 0.1, "d"
    )
    by_source = mutate.source_table([*graded_3_2, survivor, book])
    assert f"| solutions | {len(GRADED_3_2) + 1} | {len(GRADED_3_2)} | 1 |" in by_source
    assert "| seed-style notebook | 1 | 1 | 0 |" in by_source
    assert "corpus answers" not in by_source


# --- the student-minded operators (grader/authoring/mutops.py) ---------------------------------

SMALL = '''"""Doc."""
import copy

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.W_query = nn.Linear(cfg["emb_dim"], cfg["emb_dim"], bias=cfg["qkv_bias"])
        self.W_key = nn.Linear(cfg["emb_dim"], cfg["context_length"])
        self.drop = nn.Dropout(cfg["drop_rate_attn"])
        self.heads = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        self.w = nn.Parameter(torch.ones(2))

    def forward(self, x):
        q = self.W_query(x).view(-1)
        k = self.W_key(x)
        s = q @ k.T
        s.masked_fill_(s > 0, 0.0)
        return s[:3]


def configs(base):
    small = copy.deepcopy(base)
    large = {**base, "emb_dim": 1280, "n_layers": 36}
    return {"small": small, "large": large}
'''

# (kind, a line of the mutant that only that mutation writes)
NEW_OPERATOR_MUTANTS = [
    ("alias", "small = base"),  # copy.deepcopy(base) -> base
    ("alias", "large = base.update({'emb_dim': 1280, 'n_layers': 36}) or base"),
    ("alias", "self.heads = nn.ModuleList([nn.Linear(2, 2)] * 3)"),
    ("alias", "s.masked_fill(s > 0, 0.0)"),  # in place -> a copy whose result is lost
    ("attribute", "q = self.W_key(x).view(-1)"),
    ("attribute", "k = self.W_query(x)"),
    ("method", "q = self.W_query(x).reshape(-1)"),
    ("config", "self.drop = nn.Dropout(0.1)"),  # GPT-2 small's literal
    ("config", "self.W_query = nn.Linear(768, cfg['emb_dim'], bias=cfg['qkv_bias'])"),
    ("config", "self.W_query = nn.Linear(cfg['context_length'], cfg['emb_dim'], bias="),
    ("flag", "bias=not cfg['qkv_bias'])"),
    ("flag", "self.W_key = nn.Linear(cfg['emb_dim'], cfg['context_length'], bias=False)"),
    ("flag", "self.drop = nn.Dropout(cfg['drop_rate_attn'], inplace=True)"),
    ("wrap", "self.w = torch.ones(2)"),
    ("wrap", "self.heads = [nn.Linear(2, 2) for _ in range(3)]"),
    ("order", "s.masked_fill_(s > 0, 0.0)\n        s = q @ k.T"),
    ("dict", "return {'small': large, 'large': small}"),
    ("slice", "return s[:]"),
    ("slice", "return s[:3 + 1]"),
]


@pytest.fixture(scope="module")
def small_mutants() -> list[Mutant]:
    return mutate.mutants_of(SMALL)  # with the first pack's vocabulary (GPT-2 small)


@pytest.mark.parametrize(("kind", "line"), NEW_OPERATOR_MUTANTS)
def test_each_new_operator_makes_the_mutant_it_should(small_mutants, kind, line):
    found = [m for m in small_mutants if line in m.source and line not in m.original]
    assert found, f"no mutant writes {line!r}"
    assert {m.kind for m in found} == {kind}, [(m.kind, m.description) for m in found]
    for m in found:
        compile(m.source, "<mutant>", "exec")
        assert m.diff().count("@@ ") == 1, m.diff()


def test_new_kinds_filter_and_independent_statements_stay_in_order(small_mutants):
    new = mutate.mutants_of(SMALL, NEW_KINDS)
    assert {m.kind for m in new} <= set(NEW_KINDS)
    assert {m.source for m in new} <= {m.source for m in small_mutants}
    swaps = [m for m in new if m.kind == "order"]
    # q and k are computed from x alone: swapping them is equivalent, so it is no mutant.
    assert not any("k = self.W_key(x)\n        q =" in m.source for m in swaps)
    # A key read again in the same function is the same mistake again: only its first read.
    configs = [m for m in new if m.kind == "config"]
    assert any("nn.Linear(768, cfg['emb_dim']" in m.source for m in configs)
    assert not any("cfg['emb_dim'], 768" in m.source for m in configs)
    assert not any("nn.Linear(768, cfg['context_length'])" in m.source for m in configs)


def test_skipped_functions_are_not_mutated():
    (forward,) = [n for n in ast.walk(ast.parse(SMALL)) if getattr(n, "name", "") == "forward"]
    inside = range(forward.lineno, forward.end_lineno + 1)
    assert any(m.line in inside for m in mutants(SMALL))
    kept = mutants(SMALL, skip=("forward",))
    assert kept and not any(m.line in inside for m in kept)


def test_the_seed_style_answers_are_mutated_as_grade_takes_them():
    for e in EXERCISES:
        (name, source), *_ = [s for s in mutate.sources(e.id, book=True) if "seed_style" in s[0]]
        assert name == f"seed_style/{e.filename}"
        compile(source, name, "exec")
    assert "torch.nn.Parameter(sa_v2.W_query.weight.T)" in mutate.seed_style_answers()["3.1"]


def test_heads_that_are_one_module_are_killed_by_the_heads_check():
    """The hole the new operators found: the seed-style 3.2 answer with its wrapper's heads
    built as [CausalAttention(...)] * num_heads got full marks before the heads check."""
    (source,) = [s for n, s in mutate.sources("3.2", book=True) if n.startswith("seed_style")]
    (tied,) = [
        m for m in mutate.mutants_of(source, ("alias",)) if "one object repeated" in m.description
    ]
    status, failing = mutate.grade_source("3.2", tied.source, max_examples=TEST_MAX_EXAMPLES)
    assert status != "passed"
    assert failing == ("each of its two heads has weights of its own",)


def test_a_block_that_swaps_its_layer_norms_is_killed():
    """The second hole: with fresh weights both LayerNorms hold ones and zeros, so a block that
    applies norm2 where the book applies norm1 gave the reference's logits until the oracle's
    LayerNorms got weights of their own."""
    (swap,) = [
        m
        for m in mutate.mutants_of(mutate.mutated_files("4.3")[0].read_text(), ("attribute",))
        if m.description == "self.norm1 -> self.norm2"
    ]
    status, failing = mutate.grade_source("4.3", swap.source, max_examples=TEST_MAX_EXAMPLES)
    assert status != "passed"
    assert any("eval mode" in name for name in failing), failing


def test_the_snippets_build_the_oracle_the_judge_builds():
    import torch

    from llm_pack.checks.gpt_reference import (
        REFERENCE_WITH_RATES_SOURCE,
        reference_with_rates,
        split_config,
    )
    from reference import GPT_CONFIG_124M, GPTModel

    small = {"vocab_size": 11, "context_length": 4, "emb_dim": 6, "n_heads": 2, "n_layers": 2}
    cfg = split_config({**GPT_CONFIG_124M, **small}, dict.fromkeys(SPLIT, 0.25))
    scope = {"torch": torch, "GPTModel": GPTModel}
    exec(REFERENCE_WITH_RATES_SOURCE, scope)
    torch.manual_seed(5)
    judge = reference_with_rates(cfg)
    after_judge = torch.rand(3)
    torch.manual_seed(5)
    snippet = scope["reference_with_rates"](cfg)
    assert torch.equal(torch.rand(3), after_judge)  # the norms draw from a generator of their own
    theirs = snippet.state_dict()
    assert list(theirs) == list(judge.state_dict())
    for name, value in judge.state_dict().items():
        assert torch.equal(value, theirs[name]), name
    norms = [judge.trf_blocks[0].norm1, judge.trf_blocks[0].norm2, judge.final_norm]
    scales = [n.scale for n in norms]
    assert not torch.equal(scales[0], scales[1]) and not torch.equal(scales[1], scales[2])


def test_without_a_vocabulary_there_is_no_literal_config_mutant():
    plain = [m for m in mutants(SMALL) if m.kind == "config"]
    assert plain == []  # nothing to replace cfg[...] with, nothing to cross-wire
    with_vocabulary = [m for m in mutate.mutants_of(SMALL) if m.kind == "config"]
    assert any("GPT-2 small's 768" in m.description for m in with_vocabulary)


def test_a_capped_run_spreads_its_mutants_over_the_file():
    from grader.authoring.mutation import spread

    found = mutate.mutants_of(SMALL)
    picked = spread(found, 5)
    assert [i for i, _ in picked] == [i * len(found) // 5 for i in range(5)]
    assert picked[0][0] == 0 and picked[-1][0] >= len(found) * 4 // 5
    assert spread(found, None) == list(enumerate(found)) == spread(found, len(found) + 3)
    assert spread(found, 0) == []


def test_a_pack_declares_its_vocabulary_in_pack_toml(tmp_path):
    from grader.authoring.mutation import pack_settings
    from grader.shared.packs import Pack

    (tmp_path / "pack.toml").write_text(
        '[mutation]\nsource = "the base config"\nliterals = { emb_dim = 768, name = [1] }\n'
        'crossed = { emb_dim = ["context_length"] }\nskip = { "9.1" = ["forward"] }\n'
    )
    pack = Pack("p", "P", tmp_path, ())
    vocabulary, skip = pack_settings(pack)
    assert vocabulary.literals == {"emb_dim": 768}  # a list is no literal: left out
    assert vocabulary.crossed == {"emb_dim": ("context_length",)}
    assert vocabulary.source == "the base config" and skip == {"9.1": ("forward",)}
    found = [m for m in mutants(SMALL, ("config",), vocabulary=vocabulary)]
    assert any(m.description.endswith("the base config's 768") for m in found)
    (tmp_path / "pack.toml").write_text("[mutation]\nliterals = 3\n")
    assert pack_settings(pack) == (type(vocabulary)(), {})


def test_the_first_pack_declares_its_vocabulary_once():
    """The first pack's vocabulary and unmutated functions are its [mutation] table, which
    bench/mutate.py and grade check-pack both read: the same mutants of every solution."""
    from grader.authoring.mutation import file_jobs, pack_settings
    from grader.authoring.proof import solution_file
    from grader.shared.packs import read_pack
    from reference import GPT_CONFIG_124M

    pack = read_pack(ROOT / "llm_pack")
    vocabulary, skip = pack_settings(pack)
    assert (vocabulary, skip) == (mutate.VOCABULARY, mutate.NEVER_RUN)
    assert vocabulary.source == "GPT-2 small"
    assert skip == {"4.1": ("forward",), "4.2": ("forward",)}
    # GPT-2 small's values are the reference's 124M config, and 4.3's rates its drop_rate.
    base = {k: v for k, v in vocabulary.literals.items() if k not in SPLIT}
    assert base == GPT_CONFIG_124M
    assert all(vocabulary.literals[k] == GPT_CONFIG_124M["drop_rate"] for k in SPLIT)
    assert vocabulary.crossed["context_length"] == ("emb_dim", "vocab_size")
    rates = ("drop_rate", *SPLIT)
    for rate in rates:
        assert vocabulary.crossed[rate] == tuple(r for r in rates if r != rate)
    for ex in pack.exercises:
        source = solution_file(pack, ex).read_text(encoding="utf-8")
        checked = [
            job[3]
            for job in file_jobs(
                ex.id, ex.filename, source, None, skip=skip.get(ex.id, ()), vocabulary=vocabulary
            )
        ]
        benched = mutate.mutants_of(source, None, mutate.NEVER_RUN.get(ex.id, ()))
        assert [(m.description, m.source) for m in checked] == [
            (m.description, m.source) for m in benched
        ], ex.id
    assert any(m.kind == "config" for e in EXERCISES for m in mutate.exercise_mutants(e.id))


def test_rounds_give_the_verdicts_one_grade_a_mutant_gives(graded_3_2):
    """check-pack grades mutants in rounds (one mutant of each exercise a submission): the
    verdicts are those of grading each mutant alone."""
    from grader.authoring.mutation import run_rounds

    every = mutate.exercise_mutants("3.2")
    jobs = [
        ("3.2", v.file, v.index, every[v.index], None, TEST_MAX_EXAMPLES) for v in graded_3_2[:3]
    ]
    original = mutate.exercise_mutants("3.1")[0].original
    unmutated = Mutant("original", "unmutated", 0, original, original)
    jobs.insert(1, ("3.1", BY_ID["3.1"].filename, -1, unmutated, None, TEST_MAX_EXAMPLES))
    rounds = run_rounds(jobs, processes=1)
    assert [v.index for v in rounds] == [job[2] for job in jobs]  # in the jobs' order
    assert not rounds[1].killed and rounds[1].exercise_id == "3.1"
    for alone, together in zip(graded_3_2[:3], [rounds[0], *rounds[2:]], strict=True):
        assert (together.killed, together.status, together.failing) == (
            alone.killed,
            alone.status,
            alone.failing,
        )
