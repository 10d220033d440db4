"""Benchmark: the similarity report of ``grade batch`` over a generated class.

Generates ``--size`` submission folders (default 300). Each answer is one of the instructor
solution, the corpus's correct and wrong answers (tests/corpus) or the stub, in the student's
own disguise (``tests/copying.py``: renamed variables, comments, formatting, order), plus one
or two helper functions of the student's own (random code, so that two students who started
from the same answer still differ); ``--copies`` students copy another student's whole
submission and disguise it. Then it times what ``grade batch`` does after grading, on a real
OUT folder:

- collect: reading every submission's answers from DIR into gradebook.sqlite;
- first run: fingerprinting every answer, comparing them through the fingerprint index,
  highlighting the matching regions of every pair above the floor, writing similarity.csv;
- resumed run: the same with nothing new (nothing is recomputed);
- one resubmission: one student's answers changed (only that student is fingerprinted again);
- brute force: every pair of fingerprints compared directly, for comparison with the index;

and prints how many planted copies were found. ``--quality`` also prints how well copies and
independent answers are told apart on the corpus (the measurement behind the parameters).

    python bench/bench_similarity.py [--size 300] [--copies 20] [--seed 1] [--quality]

Only public tools are used: this repository's code and the Python standard library.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

ATTRS = [
    "weight",
    "bias",
    "shape",
    "numel",
    "T",
    "data",
    "mean",
    "sum",
    "size",
    "view",
    "dim",
    "item",
    "grad",
    "device",
    "dtype",
    "norm",
    "std",
    "max",
    "min",
    "abs",
    "flatten",
]
CALLS = [
    "len",
    "sorted",
    "max",
    "min",
    "abs",
    "round",
    "sum",
    "list",
    "tuple",
    "int",
    "float",
    "math.sqrt",
    "math.log",
    "math.exp",
    "torch.zeros",
    "torch.ones",
    "torch.tensor",
    "torch.arange",
    "torch.randn",
    "torch.cat",
    "torch.stack",
    "print",
    "isinstance",
]
KEYS = [
    "emb_dim",
    "n_heads",
    "n_layers",
    "vocab_size",
    "context_length",
    "drop_rate",
    "lr",
    "batch",
    "steps",
    "scale",
    "name",
    "eps",
    "size",
    "total",
    "hidden",
    "ratio",
]
OPS = ["+", "-", "*", "/", "//", "%", "**", "@"]
COMPARE = ["<", ">", "==", "!=", "<=", ">="]


def _expr(rng: random.Random, names: list[str], depth: int = 0) -> str:
    """A random expression over ``names`` (API calls, attributes, arithmetic, literals)."""
    kind = rng.random() if depth < 2 else rng.random() * 0.4
    if kind < 0.2:
        return rng.choice(names)
    if kind < 0.4:
        return str(rng.choice([rng.randint(0, 4096), round(rng.uniform(0, 10), rng.randint(1, 3))]))
    if kind < 0.55:
        return f"{rng.choice(names)}.{rng.choice(ATTRS)}"
    if kind < 0.75:
        args = ", ".join(_expr(rng, names, depth + 1) for _ in range(rng.randint(0, 3)))
        return f"{rng.choice(CALLS)}({args})"
    if kind < 0.9:
        return f"({_expr(rng, names, depth + 1)} {rng.choice(OPS)} {_expr(rng, names, depth + 1)})"
    return f"{rng.choice(names)}[{rng.choice(KEYS)!r}]"


def _statement(rng: random.Random, names: list[str], indent: str, target: str) -> list[str]:
    kind = rng.random()
    if kind < 0.45:
        return [f"{indent}{target} = {_expr(rng, names)}"]
    if kind < 0.6:
        var = rng.choice(["i", "j", "k", "n", "idx", "step"])
        cond = f" if {var} {rng.choice(COMPARE)} {rng.randint(0, 9)}" * (rng.random() < 0.5)
        return [
            f"{indent}{target} = [{_expr(rng, names + [var])} for {var} in "
            f"range({rng.randint(2, 64)}){cond}]"
        ]
    if kind < 0.75:
        return [
            f"{indent}{target} = {{{rng.choice(KEYS)!r}: {_expr(rng, names)}, "
            f"{rng.choice(KEYS)!r}: {_expr(rng, names)}}}"
        ]
    if kind < 0.9:
        return [
            f"{indent}if {_expr(rng, names)} {rng.choice(COMPARE)} {_expr(rng, names)}:",
            f"{indent}    {target} = {_expr(rng, names)}",
            f"{indent}else:",
            f"{indent}    {target} = {_expr(rng, names)}",
        ]
    var = rng.choice(["x", "y", "item", "row"])
    return [
        f"{indent}{target} = 0",
        f"{indent}for {var} in {_expr(rng, names)}:",
        f"{indent}    {target} += {_expr(rng, names + [var])}",
    ]


def helper(rng: random.Random, name: str) -> str:
    """A function of the student's own: random statements over its arguments."""
    args = rng.sample(["cfg", "model", "x", "tokens", "weights", "a", "b", "n"], rng.randint(1, 3))
    lines = [f"def {name}({', '.join(args)}):"]
    names = list(args)
    for i in range(rng.randint(3, 7)):
        target = f"v{i}"
        lines += _statement(rng, names, "    ", target)
        names.append(target)
    lines.append(f"    return {rng.choice(names[len(args) :])}")
    return "\n".join(lines) + "\n"


def answer_pool() -> dict[str, list[str]]:
    from support import CORPUS, SOLUTION

    from grader.shared.registry import EXERCISES

    pool = {}
    for ex in EXERCISES:
        files = [SOLUTION / "exercises" / ex.filename, ROOT / "exercises" / ex.filename]
        files += sorted((CORPUS / ex.module).glob("*.py"))
        pool[ex.id] = [p.read_text(encoding="utf-8") for p in files]
    return pool


def make_class(folder: Path, size: int, copies: int, seed: int) -> list[tuple[str, str]]:
    """``size`` submission folders; returns the planted (original, copy) pairs."""
    from copying import disguise

    from grader.shared.registry import EXERCISES

    rng = random.Random(seed)
    pool = answer_pool()
    names = [f"student{i:03d}" for i in range(size)]
    planted = []
    for i, name in enumerate(names):
        target = folder / name / "exercises"
        target.mkdir(parents=True)
        original = names[rng.randrange(i)] if i >= size - copies else None
        for ex in EXERCISES:
            if original:
                source = (folder / original / "exercises" / ex.filename).read_text()
            else:
                source = rng.choice(pool[ex.id]) + "\n\n"
                for h in range(rng.randint(1, 2)):
                    source += "\n\n" + helper(rng, f"helper_{h}")
            (target / ex.filename).write_text(disguise(source, rng.randrange(1 << 30)))
        if original:
            planted.append((original, name))
    return planted


def timed(label: str, fn, *args):
    from grader.analysis import similarity

    similarity._prepared.cache_clear()  # as in a new process: nothing tokenized yet
    start = time.perf_counter()
    value = fn(*args)
    print(f"  {label:<46} {time.perf_counter() - start:7.2f} s")
    return value


def loaded(db) -> dict:
    from grader.analysis import answers
    from grader.batch.ledger import exercise_ids

    return {ex: answers.fingerprints(db, ex) for ex in exercise_ids(db)}


def with_index(fps: dict) -> set:
    """The pairs above the floor, found through the fingerprint index."""
    from grader.analysis.insight import FLOOR
    from grader.analysis.similarity import compare

    return {(ex, a, b) for ex, f in fps.items() for a, b, _ in compare(f, FLOOR).pairs}


def brute_force(fps: dict) -> set:
    """The same pairs, by comparing every pair of answers directly (what the index avoids)."""
    from collections import Counter

    from grader.analysis.insight import FLOOR
    from grader.analysis.similarity import MIN_SHARED, MIN_TOKENS, common_cap

    found = set()
    for ex, f in fps.items():
        names = sorted(n for n in f if f[n].distinctive >= MIN_TOKENS and f[n].hashes)
        counts = Counter(h for n in names for h in f[n].hashes)
        common = {h for h, c in counts.items() if c > common_cap(len(names))}
        kept = {n: f[n].hashes - common for n in names}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                smaller, shared = min(len(kept[a]), len(kept[b])), len(kept[a] & kept[b])
                if shared >= MIN_SHARED and shared / smaller > FLOOR:
                    found.add((ex, a, b))
    return found


def run(size: int, copies: int, seed: int, keep: bool = False) -> None:
    from types import SimpleNamespace

    from grader.analysis import insight
    from grader.batch.entries import content_hash, discover
    from grader.batch.ledger import Ledger
    from grader.shared.registry import EXERCISES

    work = Path(tempfile.mkdtemp(prefix="bench-similarity-"))
    try:
        print(f"generating {size} submissions ({copies} disguised copies of another) ...")
        planted = make_class(work / "class", size, copies, seed)
        ledger = Ledger(work / "out")
        ids = [e.id for e in EXERCISES]
        ledger.set_meta({"exercises": str(ids).replace("'", '"'), "settings_hash": "bench"})
        entries = discover(work / "class")
        hashes = {e.name: content_hash(e) for e in entries}
        settings = SimpleNamespace(unzip_mb=64, unzip_files=2000)
        print(f"{len(entries)} submissions x {len(ids)} exercises:")
        timed(
            "collect answers from DIR", insight.collect_answers, ledger, entries, hashes, settings
        )
        timed(
            "first run (fingerprint, index, regions, csv)",
            insight.write_insight,
            ledger.db,
            ledger.out,
        )
        timed("resumed run, nothing new", insight.write_insight, ledger.db, ledger.out)
        changed = entries[0]
        path = changed.path / "exercises" / EXERCISES[-1].filename
        path.write_text(path.read_text() + "\n\nEXTRA = [1, 2, 3]\n")
        hashes[changed.name] = content_hash(changed)
        timed(
            "one resubmission: collect", insight.collect_answers, ledger, entries, hashes, settings
        )
        timed("one resubmission: compare again", insight.write_insight, ledger.db, ledger.out)
        fps = loaded(ledger.db)
        indexed = timed("compare only, through the index", with_index, fps)
        brute = timed("compare only, every pair (brute force)", brute_force, fps)
        assert indexed == brute, "the index and brute force disagree"
        report(ledger.db, planted)
        ledger.close()
    finally:
        if keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(db, planted: list[tuple[str, str]]) -> None:
    rows = db.execute("SELECT exercise_id, submission_a, submission_b, similarity FROM similarity")
    rows = rows.fetchall()
    pairs = {(a, b) for _, a, b, _ in rows}
    wanted = {tuple(sorted(p)) for p in planted}
    found = {p for p in wanted if p in pairs}
    family: dict[str, str] = {}  # student -> the original a chain of copies starts from

    def root(n: str) -> str:
        while n in family:
            n = family[n]
        return n

    for original, copy in planted:
        family[copy] = original
    others = {p for p in pairs if p not in wanted}
    related = {p for p in others if root(p[0]) == root(p[1])}
    runs = db.execute("SELECT exercise_id, answers, scored FROM similarity_runs").fetchall()
    print(f"pairs above the floor: {len(rows)}, over {len(pairs)} pairs of students")
    print("compared per exercise: " + ", ".join(f"{e} {s}/{n}" for e, n, s in runs))
    print(
        f"planted copies found: {len(found)}/{len(wanted)}; other pairs of students reported: "
        f"{len(others)} ({len(related)} of them two copies of one original)"
    )


def quality() -> None:
    """Copies and independent answers of the corpus: how far apart their similarities are."""
    from copying import disguise
    from support import CORPUS, SOLUTION

    from grader.analysis.similarity import similarity
    from grader.shared.registry import EXERCISES

    copies, independent, unscored = [], [], 0
    for ex in EXERCISES:
        corrects = [(SOLUTION / "exercises" / ex.filename).read_text()]
        corrects += [p.read_text() for p in sorted((CORPUS / ex.module).glob("correct_*.py"))]
        wrongs = [p.read_text() for p in sorted((CORPUS / ex.module).glob("wrong_*.py"))]
        for i, a in enumerate(corrects):
            for b in corrects[i + 1 :]:
                independent.append(similarity(a, b))
        for s, a in enumerate(corrects + wrongs):
            copies.append(similarity(a, disguise(a, s)))
    for name, values in (("disguised copies", copies), ("independent answers", independent)):
        scored = sorted(v for v in values if v is not None)
        unscored = len(values) - len(scored)
        above = {t: sum(v >= t for v in scored) for t in (0.5, 0.7)}
        print(
            f"{name}: {len(scored)} scored ({unscored} too short), min {scored[0]:.2f}, "
            f"median {scored[len(scored) // 2]:.2f}, max {scored[-1]:.2f}, "
            f">= 0.5: {above[0.5]}, >= 0.7: {above[0.7]}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=300)
    p.add_argument("--copies", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quality", action="store_true", help="also measure copies vs independent")
    p.add_argument("--keep", action="store_true", help="keep the generated class and OUT")
    args = p.parse_args()
    if args.quality:
        quality()
    run(args.size, min(args.copies, args.size - 1), args.seed, args.keep)


if __name__ == "__main__":
    main()
