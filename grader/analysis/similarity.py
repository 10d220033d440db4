"""Which answers to an exercise are alike beyond chance: token fingerprints with winnowing,
as MOSS computes them, over the normalized tokens of ``grader.analysis.tokens``.

Each answer is cut into overlapping k-grams of ``K`` normalized tokens, each hashed
(deterministically: the same hashes on every run and machine, so they can be stored). The
k-grams that also occur in the shared base (the code of the packages each pack lists as
``shared``: its handed-out stubs and its reference code) are no evidence and are dropped; of
the rest, winnowing keeps the smallest hash of every ``WINDOW`` consecutive k-grams, which
guarantees that any match of ``K + WINDOW - 1`` tokens or more is seen while storing about a
third of the hashes. Winnowing runs on each stretch between base code and definition
boundaries on its own, so an answer gives the same fingerprints wherever it stands (alone,
after the reference classes pasted into a notebook, or with its functions in another order).

An answer with fewer than ``MIN_TOKENS`` tokens outside the base is too short to tell apart
from an independent answer (an answer of one line, say) and is not scored. Within a class, a
fingerprint found in more than ``max(COMMON_MIN, COMMON_SHARE * answers)`` answers is what
many students write independently (as MOSS's ``-m``) and is not evidence either.

Pairs are found through an inverted index (fingerprint -> answers), never by comparing every
pair; a pair's similarity is the share of the smaller answer's fingerprints found in the
other (so copying an answer and adding to it still shows), 0 to 1.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from grader.analysis.tokens import Token, normalize, shared_packages

K = 6  # tokens per k-gram
WINDOW = 4  # winnowing window: matches of K + WINDOW - 1 = 9 tokens are always seen
MIN_TOKENS = 50  # an answer with fewer tokens outside the base is not scored
COMMON_MIN, COMMON_SHARE = 10, 0.03  # as MOSS's -m 10, growing with very large classes
MIN_SHARED = 5  # fewer shared fingerprints than this is chance, whatever the ratio
ALGORITHM = f"tokens-v1/k{K}/w{WINDOW}"  # change v1 when tokens.py changes what it emits
MOD = (1 << 61) - 1
BASE_MULT = 1_000_003


@dataclass
class Fingerprint:
    """What is kept of one answer: its winnowed hashes outside the base, and its size."""

    hashes: frozenset[int]
    tokens: int  # normalized tokens in the answer
    distinctive: int  # tokens covered by a k-gram that is not in the base

    def to_bytes(self) -> bytes:
        return array("q", sorted(self.hashes)).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, tokens: int, distinctive: int) -> Fingerprint:
        values = array("q")
        values.frombytes(data)
        return cls(frozenset(values), tokens, distinctive)


@cache
def _token_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=7).digest(), "little")


def kgram_hashes(tokens: list[Token]) -> list[int | None]:
    """The hash of the k-gram starting at each token (``None`` for one that spans two
    top-level statements; no k-gram when there are fewer than K tokens)."""
    values = [_token_hash(t.text) for t in tokens]
    out: list[int | None] = []
    for i in range(len(values) - K + 1):
        if tokens[i].segment != tokens[i + K - 1].segment:
            out.append(None)  # across two definitions: reordering them must not matter
            continue
        h = 0
        for v in values[i : i + K]:
            h = (h * BASE_MULT + v) % MOD
        out.append(h)
    return out


def base_files() -> list[Path]:
    """The shared base: the code of the packages the packs in use share (``Pack.shared``:
    the reference code and the handed-out stubs, say), read from their files, never imported."""
    files: list[Path] = []
    for package, found in shared_packages():
        found = [p for p in found if p.name != "__init__.py"]
        assert found, f"the shared package {package} was not found"
        files += found
    return files


@cache
def base_hashes() -> frozenset[int]:
    out: set[int] = set()
    for path in base_files():
        out.update(
            h for h in kgram_hashes(normalize(path.read_text(encoding="utf-8"))) if h is not None
        )
    return frozenset(out)


@cache
def base_key() -> str:
    """Changes when the algorithm or the base does: stored fingerprints are then recomputed."""
    h = hashlib.sha256(ALGORITHM.encode())
    for path in base_files():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def winnow(hashes: list[int | None], window: int | None = None) -> set[int]:
    """Robust winnowing: the rightmost smallest hash of each window of ``window`` consecutive
    k-grams. ``None`` (a base k-gram, or one across two definitions) cuts the sequence: each
    run between them is winnowed on its own, so the same code gives the same fingerprints
    wherever it stands; a run shorter than the window (fewer than K + WINDOW - 1 tokens, such
    as a changed argument in the shared code) is noise and gives none."""
    window = window or WINDOW
    chosen: set[int] = set()
    run: list[int] = []
    for h in [*hashes, None]:
        if h is not None:
            run.append(h)
            continue
        last = -1
        for start in range(len(run) - window + 1):
            part = run[start : start + window]
            best = min(part)
            where = start + max(i for i, v in enumerate(part) if v == best)
            if where != last:
                chosen.add(best)
                last = where
        run = []
    return chosen


@lru_cache(maxsize=4096)
def _prepared(source: str) -> tuple[list[Token], list[int | None]]:
    tokens = normalize(source)
    return tokens, kgram_hashes(tokens)


def fingerprint(source: str) -> Fingerprint:
    tokens, hashes = _prepared(source)
    base = base_hashes()
    kept = [None if h in base else h for h in hashes]
    covered = bytearray(len(tokens))
    for i, h in enumerate(kept):
        if h is not None:
            covered[i : i + K] = b"\1" * K
    return Fingerprint(frozenset(winnow(kept)), len(tokens), sum(covered))


@dataclass
class Comparison:
    """The pairs of one exercise's answers above ``floor``, and what was left out."""

    pairs: list[tuple[str, str, float]]  # (a, b, similarity > floor), a < b, highest first
    scored: list[str]
    short: list[str]  # too short to tell apart: not scored
    common: frozenset[int] = field(default_factory=frozenset)  # shared by too many answers


def common_cap(n: int) -> int:
    return max(COMMON_MIN, math.ceil(COMMON_SHARE * n))


def compare(answers: dict[str, Fingerprint], floor: float) -> Comparison:
    """Every pair of ``answers`` whose similarity is above ``floor``, found via an index."""
    scored = sorted(n for n, f in answers.items() if f.distinctive >= MIN_TOKENS and f.hashes)
    taken = set(scored)
    short = sorted(n for n in answers if n not in taken)
    postings: dict[int, list[int]] = defaultdict(list)
    for i, name in enumerate(scored):
        for h in answers[name].hashes:
            postings[h].append(i)
    cap = common_cap(len(scored))
    common = frozenset(h for h, ids in postings.items() if len(ids) > cap)
    size = [len(answers[n].hashes - common) for n in scored]
    shared: Counter[tuple[int, int]] = Counter()
    for h, ids in postings.items():
        if h in common or len(ids) < 2:
            continue
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                shared[(ids[x], ids[y])] += 1
    pairs = []
    for (i, j), count in shared.items():
        if count < MIN_SHARED:
            continue
        smaller = min(size[i], size[j])
        similarity = count / smaller if smaller else 0.0
        if similarity > floor:
            pairs.append((scored[i], scored[j], round(similarity, 4)))
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return Comparison(pairs, scored, short, common)


def similarity(a: str, b: str) -> float | None:
    """The similarity of two answers alone (no class: nothing is common), or ``None`` when
    either is too short to tell apart."""
    fa, fb = fingerprint(a), fingerprint(b)
    if min(fa.distinctive, fb.distinctive) < MIN_TOKENS or not (fa.hashes and fb.hashes):
        return None
    return len(fa.hashes & fb.hashes) / min(len(fa.hashes), len(fb.hashes))


def _runs(flags: bytearray) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, f in enumerate([*flags, 0]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            runs.append((start, i))
            start = None
    return runs


def matching_regions(
    a: str, b: str, common: Iterable[int] = ()
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The regions of ``a`` and ``b`` that match (every shared k-gram outside the base and
    the class's common code) as character spans ``(start, end, match)``: region ``match`` of
    ``a`` corresponds to the region(s) of ``b`` with the same number."""
    (ta, ha), (tb, hb) = _prepared(a), _prepared(b)
    excluded = base_hashes() | frozenset(common)
    shared = (set(ha) & set(hb)) - excluded - {None}
    flags_a, flags_b = bytearray(len(ta)), bytearray(len(tb))
    for hashes, flags in ((ha, flags_a), (hb, flags_b)):
        for i, h in enumerate(hashes):
            if h in shared:
                flags[i : i + K] = b"\1" * K
    runs_a, runs_b = _runs(flags_a), _runs(flags_b)
    where_b: dict[int | None, int] = {}
    for i, h in enumerate(hb):
        where_b.setdefault(h, i)
    match_of_b: dict[int, int] = {}
    for number, (start, end) in enumerate(runs_a):
        for i in range(start, max(start + 1, end - K + 1)):
            if i < len(ha) and ha[i] in shared:
                j = where_b[ha[i]]
                for r, (s, e) in enumerate(runs_b):
                    if s <= j < e:
                        match_of_b.setdefault(r, number)
                break
    spans_a = [(ta[s].start, ta[e - 1].end, n) for n, (s, e) in enumerate(runs_a)]
    spans_b = [
        (tb[s].start, tb[e - 1].end, match_of_b.get(r, -1)) for r, (s, e) in enumerate(runs_b)
    ]
    return spans_a, spans_b
