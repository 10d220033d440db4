"""Similar answers in ``grade batch``: tokens, fingerprints, the class comparison, the tables
and similarity.csv. No grading here: answers are read from submission folders and notebooks
(with the grader's own notebook extraction) straight into a gradebook database.
"""

from __future__ import annotations

import csv
import random
import re
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from copying import disguise
from nbsupport import write_notebook
from support import CORPUS, ROOT, SOLUTION, make_submission

from grader.analysis import answers, insight, similarity
from grader.analysis.tokens import NEWLINE, normalize
from grader.batch.entries import content_hash, discover
from grader.batch.ledger import Ledger
from grader.shared.registry import BY_ID, EXERCISES

SETTINGS = SimpleNamespace(unzip_mb=64, unzip_files=2000)


def solution(exercise_id: str) -> str:
    return (SOLUTION / "exercises" / BY_ID[exercise_id].filename).read_text()


def corpus(exercise_id: str, stem: str) -> str:
    return (CORPUS / BY_ID[exercise_id].module / f"{stem}.py").read_text()


def stub(exercise_id: str) -> str:
    return (ROOT / "exercises" / BY_ID[exercise_id].filename).read_text()


def texts(source: str) -> list[str]:
    return [t.text for t in normalize(source)]


# --- normalized tokens --------------------------------------------------------------------


def test_what_a_copier_can_change_is_normalized_away():
    original = 'def total(cfg):\n    """Sum."""\n    n = cfg["emb_dim"]\n    return n * 4\n'
    copied = (
        "# my answer\n"
        "def total(config: dict) -> int:  # renamed, annotated\n"
        "    size = config['emb_dim'] ; return size*4\n"
    )
    assert texts(original) == texts(copied)
    assert texts(original)[:2] == ["def", "V"]  # a function of its own: renamed freely


def test_what_cannot_be_renamed_is_kept():
    tokens = texts(solution("3.1"))
    assert "transfer_weights" in tokens  # the contract's name
    assert {"W_query", "weight", "T", "copy_", "torch", "no_grad"} <= set(tokens)
    assert "sa_v1" not in tokens and "sa_v2" not in tokens  # parameters are variables
    kwargs = texts("def f(d_in):\n    return M(d_in=d_in)\n")
    assert kwargs[kwargs.index("M") :] == ["M", "(", "d_in", "=", "V", ")", NEWLINE, "<dedent>"]


def test_reformatting_keeps_the_tokens():
    source = solution("4.3")
    halve = re.sub(r"^( +)", lambda m: " " * (len(m.group(1)) // 2), source, flags=re.M)
    tight = halve.replace(", ", ",")  # two-space indents, no spaces after commas
    assert texts(tight) == texts(source)
    assert texts("f((x for x in y),)\n") == texts("f(x for x in y)\n")


def test_text_that_does_not_parse_is_still_tokenized():
    tokens = normalize("def f(x):\n    return x +\n")
    assert [t.text for t in tokens][:4] == ["def", "V", "(", "V"]


def test_token_spans_point_into_the_source():
    source = "import torch\n\n# comment\nvalue = torch.zeros(3)  # x\n"
    for token in normalize(source):
        piece = source[token.start : token.end]
        assert token.text in ("V", NEWLINE) or piece.strip("'\"") in token.text or piece == "3"


# --- pairs of answers ---------------------------------------------------------------------


@pytest.mark.parametrize("exercise_id", ["3.1", "4.1", "4.2", "4.3"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_disguised_copy_is_found(exercise_id, seed):
    """Renamed variables, new comments, another formatting, functions reordered."""
    original = solution(exercise_id)
    copy = disguise(original, seed)
    assert copy != original and "# " in copy
    compile(copy, "copy", "exec")
    value = similarity.similarity(original, copy)
    assert value is not None and value >= 0.7, value


@pytest.mark.parametrize(
    ("exercise_id", "stem"),
    [
        ("4.2", "correct_closed_form"),
        ("4.1", "correct_closed_form"),
        ("3.1", "correct_data_assignment"),
        ("4.1", "correct_counts_the_book_modules"),
    ],
)
def test_an_independent_correct_approach_is_not(exercise_id, stem):
    value = similarity.similarity(solution(exercise_id), corpus(exercise_id, stem))
    assert value is not None and value < 0.5, value


@pytest.mark.parametrize("exercise_id", [e.id for e in EXERCISES])
def test_untouched_stubs_are_no_evidence(exercise_id):
    fp = similarity.fingerprint(stub(exercise_id))
    assert fp.distinctive == 0 and not fp.hashes  # all of it is the shared base
    assert similarity.similarity(stub(exercise_id), stub(exercise_id)) is None


def test_a_one_line_answer_is_too_short_to_score():
    assert similarity.similarity(solution("3.3"), solution("3.3")) is None
    assert similarity.fingerprint(solution("3.3")).distinctive < similarity.MIN_TOKENS


def test_the_book_code_copied_in_is_base():
    """An answer that carries the book's classes (as notebooks do) is judged on the rest."""
    book = (ROOT / "reference" / "attention.py").read_text()
    plain, padded = (
        similarity.fingerprint(solution("4.3")),
        similarity.fingerprint(book + "\n\n" + solution("4.3")),
    )
    assert padded.hashes == plain.hashes


def test_index_finds_what_comparing_every_pair_finds():
    rng = random.Random(5)
    pool = [
        solution("4.3"),
        corpus("4.3", "correct_sdpa_attention"),
        corpus("4.3", "correct_functional_dropout"),
        solution("4.2"),
        corpus("4.2", "correct_closed_form"),
    ]
    answers_ = {
        f"s{i:02d}": similarity.fingerprint(disguise(rng.choice(pool), i)) for i in range(30)
    }
    found = {(a, b) for a, b, _ in similarity.compare(answers_, 0.5).pairs}
    names = sorted(answers_)
    brute = set()
    common = similarity.compare(answers_, 0.5).common
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            fa, fb = answers_[a].hashes - common, answers_[b].hashes - common
            shared = len(fa & fb)
            if shared >= similarity.MIN_SHARED and shared / min(len(fa), len(fb)) > 0.5:
                brute.add((a, b))
    assert found == brute and found


def test_code_that_many_students_wrote_alike_is_not_evidence():
    """More than COMMON_MIN answers sharing a passage (as MOSS's -m): it is left out."""
    shared = solution("4.2")
    answers_ = {f"s{i:02d}": similarity.fingerprint(disguise(shared, i)) for i in range(12)}
    result = similarity.compare(answers_, 0.5)
    assert result.pairs == [] and result.common and len(result.scored) == 12
    few = dict(list(answers_.items())[:3])
    assert len(similarity.compare(few, 0.5).pairs) == 3


def test_matching_regions_correspond():
    original = solution("4.2")
    copy = disguise(original, 3)
    spans_a, spans_b = similarity.matching_regions(original, copy)
    assert spans_a and spans_b
    assert "sum(p.numel() for p in GPTModel(cfg).parameters())" in "".join(
        original[s:e] for s, e, _ in spans_a
    )
    assert {m for _, _, m in spans_b} <= {m for _, _, m in spans_a}  # the same numbers
    for s, e, _ in spans_a + spans_b:
        assert 0 <= s < e


# --- a class: the tables, similarity.csv and resuming ----------------------------------------


NOTEBOOK_INTRO = "!pip install torch\nimport torch\nprint(torch.__version__)"


def notebook_copy_of(folder: Path, path: Path) -> Path:
    """A notebook whose author copied ``folder``'s 4.2 and 4.3 answers (disguised), untagged,
    between the book's code pasted in and demo cells."""
    book = (ROOT / "reference" / "attention.py").read_text()
    cells = [
        ("markdown", "# My chapter 4 notebook"),
        ("code", NOTEBOOK_INTRO),
        ("code", book.split('"""', 2)[2]),
    ]
    for ex_id in ("4.2", "4.3"):
        source = (folder / "exercises" / BY_ID[ex_id].filename).read_text()
        cells += [("markdown", f"## Exercise {ex_id}"), ("code", disguise(source, 11))]
    cells.append(("code", "print(total_params(GPT2_CONFIGS['small']))"))
    return write_notebook(path, cells)


@pytest.fixture
def klass(tmp_path) -> Path:
    root = tmp_path / "class"
    alice = {
        "4.2": "ex4_2/correct_instantiates_with_element_size.py",
        "4.3": "ex4_3/correct_own_attention_copy.py",
    }
    bob = {"4.2": "ex4_2/correct_closed_form.py", "4.3": "ex4_3/correct_functional_dropout.py"}
    make_submission(root / "alice", {k: CORPUS / v for k, v in alice.items()})
    make_submission(root / "bob", {k: CORPUS / v for k, v in bob.items()})
    make_submission(root / "dave", base=ROOT)  # the untouched stubs
    make_submission(root / "erin", base=ROOT)
    notebook_copy_of(root / "alice", root / "nina.ipynb")
    return root


def gather(klass: Path, out: Path) -> Ledger:
    ledger = Ledger(out)
    ledger.set_meta({"exercises": '["3.1", "3.2", "3.3", "4.1", "4.2", "4.3"]'})
    entries = discover(klass)
    insight.collect_answers(ledger, entries, {e.name: content_hash(e) for e in entries}, SETTINGS)
    return ledger


def csv_rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "similarity.csv").open()))


def test_a_notebook_that_copies_a_folder_submission_is_found(klass, tmp_path):
    ledger = gather(klass, tmp_path / "out")
    insight.write_insight(ledger.db, ledger.out)
    rows = csv_rows(ledger.out)
    assert list(rows[0]) == ["exercise", "submission_a", "submission_b", "similarity"]
    found = {(r["exercise"], r["submission_a"], r["submission_b"]) for r in rows}
    assert ("4.2", "alice", "nina") in found and ("4.3", "alice", "nina") in found
    assert all(float(r["similarity"]) >= 0.7 for r in rows if "nina" in r.values())
    assert not [r for r in rows if {"dave", "erin"} & set(r.values())]  # stubs: no evidence
    assert not [r for r in rows if "bob" in r.values() and r["exercise"] in ("4.2", "4.3")]
    values = [float(r["similarity"]) for r in rows]
    assert values == sorted(values, reverse=True) and all(0.5 < v <= 1 for v in values)
    # The notebook took part through the grader's extraction (no pip line, no demo print).
    text = ledger.db.execute(
        "SELECT text FROM answers WHERE submission = 'nina' AND exercise_id = '4.2'"
    ).fetchone()[0]
    assert "taken from the notebook nina.ipynb" in text and "pip install" not in text
    ledger.close()


def test_too_short_answers_are_reported_as_not_scored(klass, tmp_path):
    ledger = gather(klass, tmp_path / "out")
    insight.write_insight(ledger.db, ledger.out)
    runs = {
        e: (n, s, short)
        for e, n, s, short in ledger.db.execute(
            "SELECT exercise_id, answers, scored, short FROM similarity_runs"
        )
    }
    assert runs["3.3"][1] == 0 and '"alice"' in runs["3.3"][2]  # one line each: not scored
    assert runs["4.3"][0] == 5 and '"dave"' in runs["4.3"][2] and '"alice"' not in runs["4.3"][2]
    ledger.close()


def test_a_resumed_batch_does_not_recompute(klass, tmp_path, monkeypatch):
    ledger = gather(klass, tmp_path / "out")
    insight.write_insight(ledger.db, ledger.out)
    first = (ledger.out / "similarity.csv").read_text()
    calls = []
    real = similarity.fingerprint
    monkeypatch.setattr(answers, "fingerprint", lambda text: calls.append(text) or real(text))
    assert insight.update_similarity(ledger.db) == []  # nothing changed: nothing compared
    ledger.close()

    ledger = gather(klass, tmp_path / "out")  # the next run of the same batch
    insight.write_insight(ledger.db, ledger.out)
    assert calls == [] and (ledger.out / "similarity.csv").read_text() == first

    path = klass / "bob" / "exercises" / BY_ID["4.2"].filename  # bob resubmits 4.2
    path.write_text((klass / "alice" / "exercises" / BY_ID["4.2"].filename).read_text())
    entries = discover(klass)
    hashes = {e.name: content_hash(e) for e in entries}
    assert insight.collect_answers(ledger, entries, hashes, SETTINGS) == 1
    assert insight.update_similarity(ledger.db) == ["4.2"]
    assert len(calls) == 1  # only bob's new answer was fingerprinted
    pairs = {
        tuple(r)
        for r in ledger.db.execute(
            "SELECT submission_a, submission_b FROM similarity WHERE exercise_id = '4.2'"
        )
    }
    assert ("alice", "bob") in pairs

    shutil_entries = [e for e in entries if e.name != "nina"]  # nina's notebook removed
    insight.collect_answers(ledger, shutil_entries, hashes, SETTINGS)
    insight.write_insight(ledger.db, ledger.out)
    assert "nina" not in (ledger.out / "similarity.csv").read_text()
    ledger.close()


def test_formula_like_names_are_neutralised_in_the_csv(tmp_path):
    ledger = Ledger(tmp_path / "out")
    ledger.set_meta({"exercises": '["4.2"]'})
    insight.ensure_schema(ledger.db)
    answers.store(ledger.db, "=cmd|calc", "h1", {"4.2": solution("4.2")})
    answers.store(ledger.db, "alice", "h2", {"4.2": disguise(solution("4.2"), 2)})
    insight.write_insight(ledger.db, ledger.out)
    text = (ledger.out / "similarity.csv").read_text()
    assert re.search(r"\n4\.2,'=cmd\|calc,alice,(1\.00|0\.9\d)\n", text), text
    ledger.close()


def test_answers_of_submissions_that_cannot_be_read_are_empty(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "broken.ipynb").write_text("{not json")
    (tmp_path / "class" / "notes.txt").write_text("hello")
    ledger = gather(tmp_path / "class", tmp_path / "out")
    insight.write_insight(ledger.db, ledger.out)
    assert ledger.db.execute("SELECT COUNT(*) FROM answers").fetchone() == (0,)
    assert sqlite3.connect(ledger.out / "gradebook.sqlite").execute(
        "SELECT COUNT(*) FROM answer_sources"
    ).fetchone() == (2,)
    ledger.close()


def test_a_failure_of_ours_costs_the_report_not_the_batch(klass, tmp_path, monkeypatch, capsys):
    ledger = gather(klass, tmp_path / "out")

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(similarity, "compare", broken)
    problems = insight.write_insight(ledger.db, ledger.out)
    assert problems == ["similarity: RuntimeError: boom"]
    warning = "grade: warning: no similarity (similarity: RuntimeError: boom)"
    assert warning in capsys.readouterr().err
    assert (ledger.out / "similarity.csv").read_text().startswith("exercise,")
    assert not ledger.db.in_transaction
    monkeypatch.setattr(answers, "collect", broken)
    assert insight.collect_answers(ledger, discover(klass), {}, SETTINGS) == 0
    ledger.close()


def test_links_and_huge_files_are_not_read_beyond_the_submission(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("PASSWORD = 'hunter2'\n" * 100)
    root = tmp_path / "class"
    make_submission(root / "mallory")
    link = root / "mallory" / "exercises" / BY_ID["4.2"].filename
    link.unlink()
    link.symlink_to(secret)
    big = root / "mallory" / "exercises" / BY_ID["4.3"].filename
    big.write_text("x = 'é'\n" * 100_000)  # 900 KB, cut inside no character
    ledger = gather(root, tmp_path / "out")
    stored = dict(
        ledger.db.execute("SELECT exercise_id, text FROM answers WHERE submission = 'mallory'")
    )
    assert "4.2" not in stored and "hunter2" not in "".join(stored.values())
    assert len(stored["4.3"].encode()) <= answers.MAX_ANSWER_BYTES
    assert stored["3.1"] == solution("3.1")
    ledger.close()
