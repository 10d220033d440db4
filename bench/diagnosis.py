"""How well the reports name real students' mistakes, measured over the labeled set.

``tests/diagnosis/<exercise module>/wrong_*.py``: answers to 3.1-4.3, each with a mistake seen
in real students' work (seed notebooks, public code), written anew. The set has two halves
(issue 56): the *working* half (``tests/diagnosis/<exercise module>/``), which whoever changes
the diagnosis tunes on, and the *held-out* half (``tests/diagnosis/heldout/<exercise
module>/``), collected apart and not opened by whoever changes the diagnosis; its figures are
the ones that count. Each half is reported on its own. Their headers::

    # seen-in: <where>                 (repeatable; lines are joined)
    # cause: <cause id>                (repeatable: the answer has each of them)
    # cause-words: <w1>, <w2>          (repeatable: alternatives; one holds when its words,
                                        case-insensitive, are all in the first message)
    # expect-failing: <check name>     (as in tests/corpus: the verdicts, checked too)

Each case is graded through ``grader.pipeline`` as ``grade`` grades (public seed, the checks'
own example counts), one file per exercise in a submission as ``grade check-pack`` does. Printed:

- the share of cases whose *first message* names the labeled cause: the exercise's first
  ``diagnosis`` entry (its cause, evidence and hint) when it has one, else the first failing
  check's message with its hint; each case that misses is listed with that message;
- hints that name a cause the answer does not have (``CAUSE_PATTERNS`` recognises a hint or a
  diagnosis that names a cause), over every failing check and diagnosis entry;
- identical pairs: an ``Expected``/``Got`` (or ``Before``/``After``) whose two texts are equal;
- ``error`` verdicts, which none of these honest answers should get.

Each half's figures are printed, then the same four figures per kind of case (its first
labeled cause), then the cases behind them; ``--figures-only`` leaves the cases out (what whoever
changes the diagnosis may read of the held-out half).

    python bench/diagnosis.py [-j N] [--max-examples N] [--half working|heldout]
                              [--figures-only] [--check]

Exit status 0 (a measurement); with ``--check``, 1 when the goals of issues 41 and 56 are not
met in a half that was measured (at least 90% named, no absent-cause hint, no identical pair,
no error).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader.authoring.corpus import CorpusCase, corpus_cases, problems  # noqa: E402
from grader.result.common import parse_message  # noqa: E402
from grader.result.schema import ExerciseResult  # noqa: E402
from grader.shared.registry import BY_ID, EXERCISES  # noqa: E402

CASES_DIR = ROOT / "tests" / "diagnosis"
HELDOUT_DIR = CASES_DIR / "heldout"
# The two halves of the labeled set, by name; the held-out half is the one that counts.
HALVES: dict[str, Path] = {"working": CASES_DIR, "heldout": HELDOUT_DIR}
GOAL_SHARE = 0.9

# The root causes a labeled case may name, each with a regular expression that recognises a
# hint (or a diagnosis) naming that cause: the phrases the checks' hints use today
# (llm_pack/checks/*.py, llm_pack/checks/hints.py, grader/judge/hints.py), and the words a
# diagnosis of that cause would use.
CAUSE_PATTERNS: dict[str, str] = {
    # 3.1
    "transfer-missing-weight": r"not (been )?(transferred|copied)|never (transferred|copied|"
    r"assigned)|(still )?holds? (its|the) (random|initial|old)",
    "transfer-swapped": r"swapp|the other's weight|holds? W_(query|key|value)'s",
    "transfer-wrong-name": r"new (attribute|parameter)|(never|not) (read|used) by forward",
    "transpose": r"stores its weight with shape \(d_out, d_in\)|invisible when d_in == d_out|"
    r"(not|never|without|forgot\w*|missing|instead of) (been |being |the )?transpos|untransposed",
    "v2-changed": r"never the other way|on sa_v2's weights change sa_v2",
    "frozen-weights": r"requires_grad|detached tensor|stops training",
    "plain-tensor": r"only lets an nn\.Parameter|assign nn\.Parameter\(tensor\)",
    # attention
    "softmax-dim": r"softmax\W.{0,60}\bdim\b|\bdim=1\b|normali[sz]es? over the (queries|"
    r"rows|wrong)",
    "scale-dim": r"\bscal(e|ed|ing) by\b|sqrt\((d_k|head_dim)|keys?\.shape\[-?1\]|square root",
    "causal-mask": r"keep the causal mask|above the diagonal are filled with -inf",
    "mask-not-cut": r"cut to the input's length|buffer cut to",
    "heads-shared": r"one module in the list twice|\] \* num_heads",
    "head-width": r"width of one head|Which argument sets the width",
    "head-count": r"keep num_heads=2|num_heads is the number of heads",
    "gpt2-sizes": r"GPT-2 small's token embeddings and context vectors",
    "wrong-class": r"MultiHeadAttentionWrapper (is|was) |not (a|the book's) MultiHeadAttention\b|"
    r"wrong class",
    "not-rebuildable": r"rebuilds the (book's|reference's) class from your module",
    "renamed-attribute": r"keep the book's attribute names|attribute names?\b.{0,40}\b(differ|"
    r"renamed)|renamed|named .{1,40} instead of",
    # arguments and configs
    "ignored-argument": r"pass the function's own|Count from cfg|Compute from cfg|ignores? (the|"
    r"its|your) (argument|cfg|d_in|dropout)",
    "hard-coded": r"not from the book's (four )?numbers|fit only that example|book's example "
    r"values|hard-?cod",
    "default-dropout": r"default rate is 0\.0",
    "missing-config-key": r"(config|cfg)\W* has no '|delete 'drop_rate' and add exactly",
    "config-not-copied": r"does not copy the dict|start each config from a copy|Copy it first",
    # counts
    "mask-counted": r"mask is (registered with register_buffer|a buffer)|mask, a buffer",
    "bias-missed": r"every nn\.Linear here has a bias|both linear layers have a bias",
    "qkv-bias": r"biases? (only )?(exactly )?when cfg\['qkv_bias'\]|read cfg\['qkv_bias'\]|"
    r"qkv_bias=True each",
    "tied-head": r"\btie[ds]?\b|tying",
    "decimal-mb": r"not 10\*\*6|1024 \* 1024 bytes|\bMiB\b",
    "inexact-count": r"exact Python int|32-bit integers",
    # chapter 4 modules
    "gelu-constant": r"GELU('s)? (constant|coefficient)|0\.044715|its GELU gives|inside \S*"
    r"ff\.layers\[1\] \(GELU\)",
    "layernorm-variance": r"unbiased|variance",
    "dropout-eval": r"dropout must do nothing in eval mode|training=self\.training",
    "dropout-place": r"applied to the sum of the token and position embeddings|drop_shortcut = "
    r"nn\.Dropout\(cfg\['drop_rate_shortcut'\]\) is applied|pass dropout=cfg\['drop_rate_attn'\]",
    "dropout-order": r"random masks are drawn|masks drawn in another order",
    "block-signature": r"must need nothing but cfg",
    "stateful": r"keep no state from one call",
    "missing-return": r"return statement missing",
    # causes first labeled in the held-out half (issue 56)
    "layers-multiple": r"\bn_layers (blocks|times)\b|times n_layers|(over|across|in) (all|every) "
    r"(the )?(n_layers )?(transformer )?blocks|counted (once )?(per|for every) (block|layer)",
    "config-values": r"change only the three keys|768/12/12|(values?|entries) (that )?differ(s)? "
    r"from GPT_CONFIG_124M|GPT_CONFIG_124M's (own )?values",
    "return-type": r"returned an? (list|tuple|str|dict)\b|return (one|a single|an) (int|number)",
    "missing-super-init": r"super\(\)\.__init__\(\)|before Module\.__init__\(\)",
    "misspelled-init": r"__init_\b|misspel",
}
# A hint naming a key cause is not an absent cause for an answer labeled with one of its values
# (the rebuild hint names a wrong class and renamed attributes alike).
RELATED: dict[str, frozenset[str]] = {
    "not-rebuildable": frozenset({"renamed-attribute", "wrong-class", "mask-not-cut"}),
    "hard-coded": frozenset({"ignored-argument"}),
    "ignored-argument": frozenset({"hard-coded"}),
    "missing-config-key": frozenset({"renamed-attribute", "config-values"}),
    # an aliased config ends with wrong values: naming them is no absent cause
    "config-values": frozenset({"missing-config-key", "config-not-copied"}),
}
CAUSES = frozenset(CAUSE_PATTERNS)


@dataclass(frozen=True)
class Labels:
    seen_in: str
    causes: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]  # alternatives, each a tuple of words all required


@dataclass(frozen=True)
class LabeledCase:
    case: CorpusCase
    labels: Labels
    id = property(lambda self: self.case.id)


def read_labels(text: str) -> Labels:
    """The ``seen-in``, ``cause`` and ``cause-words`` headers of an answer."""

    def values(key: str) -> list[str]:
        return [m.strip() for m in re.findall(rf"^# {key}:(.*)$", text, re.M)]

    words = tuple(
        tuple(w.strip() for w in line.split(",") if w.strip()) for line in values("cause-words")
    )
    return Labels(" ".join(values("seen-in")), tuple(values("cause")), words)


def labeled_cases(folder: Path = CASES_DIR) -> list[LabeledCase]:
    """Every case of one half of the labeled set (the working half by default), read by the
    corpus's own parser plus the labels."""
    return [
        LabeledCase(case, read_labels(case.path.read_text(encoding="utf-8")))
        for case in corpus_cases(folder, EXERCISES)
    ]


# --- grading ---------------------------------------------------------------------------------


def grade_all(
    cases: list[LabeledCase], processes: int | None = 1, max_examples: int | None = None
) -> dict[str, ExerciseResult]:
    """Each case's exercise result through the pipeline (public seed), in rounds of one case of
    each exercise per submission, as ``grade check-pack`` grades a corpus."""
    from grader import pipeline
    from grader.authoring.proof import Settings

    per_exercise = [[c for c in cases if c.case.exercise_id == ex.id] for ex in EXERCISES]
    settings = Settings(max_examples=max_examples, processes=processes)
    results: dict[str, ExerciseResult] = {}
    scratch = Path(tempfile.mkdtemp(prefix="diagnosis-"))
    try:
        for number, group in enumerate(zip_longest(*per_exercise), start=1):
            round_cases = [c for c in group if c is not None]
            folder = scratch / f"round{number}"
            (folder / "exercises").mkdir(parents=True)
            for c in round_cases:
                target = folder / "exercises" / BY_ID[c.case.exercise_id].filename
                shutil.copyfile(c.case.path, target)
            ids = [c.case.exercise_id for c in round_cases]
            submission = pipeline.open_path(folder, called=f"diagnosis round {number}")
            result = pipeline.finish(submission, settings.request(ids))
            graded = {ex.id: ex for ex in result.exercises}
            for c in round_cases:
                results[c.id] = graded[c.case.exercise_id]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


# --- reading a result ------------------------------------------------------------------------


def _entries(exercise: ExerciseResult) -> list[dict]:
    return [d for d in getattr(exercise, "diagnosis", None) or [] if isinstance(d, dict)]


def _entry_text(entry: dict) -> str:
    parts = [entry.get(k) for k in ("cause", "text", "evidence", "hint")]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def _message_text(message: str) -> str:
    """A check's message without what the student's code printed."""
    parsed = parse_message(message)
    parts = [parsed.text]
    if parsed.expected or parsed.got:
        parts += [f"Expected: {parsed.expected}", f"Got: {parsed.got}"]
    if parsed.hint:
        parts.append(f"Hint: {parsed.hint}")
    return "\n".join(parts)


def first_message(exercise: ExerciseResult) -> str:
    """What a student reads first about this exercise: its first diagnosis entry, else its first
    failing check's message with its hint; ``""`` when nothing failed."""
    entries = _entries(exercise)
    if entries:
        return _entry_text(entries[0])
    failing = [c for c in exercise.checks if not c.passed]
    return _message_text(failing[0].message) if failing else ""


def names_cause(labels: Labels, message: str) -> bool:
    low = message.lower()
    return any(all(w.lower() in low for w in words) for words in labels.words)


def hints(exercise: ExerciseResult) -> list[tuple[str, str]]:
    """(where, hint) of every failing check and every diagnosis entry."""
    found = []
    for c in exercise.checks:
        if not c.passed:
            hint = parse_message(c.message).hint
            if hint:
                found.append((c.name, hint))
    for entry in _entries(exercise):
        text = _entry_text(entry)
        if text:
            found.append((f"diagnosis: {entry.get('key', '?')}", text))
    return found


def causes_named(text: str) -> list[str]:
    return [cause for cause, pattern in CAUSE_PATTERNS.items() if re.search(pattern, text, re.I)]


def absent_causes(labels: Labels, text: str) -> list[str]:
    """The causes ``text`` names that the answer labeled ``labels`` does not have."""
    have = set(labels.causes)
    return [c for c in causes_named(text) if c not in have and not (RELATED.get(c, set()) & have)]


# A pair as ``pair_text`` lays it out; a tensor's further lines are indented.
_PAIR = re.compile(
    r"^(Expected|Before):[ \t]*(.*?)\n(Got|After):[ \t]*(.*?)(?=\n(?!\s)|\Z)", re.M | re.S
)


def identical_pairs(exercise: ExerciseResult) -> list[tuple[str, str]]:
    """(where, the repeated text) of every Expected/Got or Before/After pair whose two texts
    are the same, in failing checks' messages and diagnosis entries."""
    texts = [(c.name, c.message) for c in exercise.checks if not c.passed]
    texts += [(f"diagnosis: {e.get('key', '?')}", _entry_text(e)) for e in _entries(exercise)]
    found = []
    for where, text in texts:
        for m in _PAIR.finditer(text):
            one, two = (" ".join(m.group(i).split()) for i in (2, 4))
            if one == two:
                found.append((where, f"{m.group(1)}/{m.group(3)}: {one[:160]}"))
    return found


# --- the measurement -------------------------------------------------------------------------


@dataclass
class CaseOutcome:
    id: str
    causes: tuple[str, ...]
    seen_in: str
    status: str
    points: str
    named: bool
    first: str
    absent: list[tuple[str, str, list[str]]] = field(default_factory=list)  # where, hint, causes
    identical: list[tuple[str, str]] = field(default_factory=list)
    header_problems: list[str] = field(default_factory=list)
    lost_points: bool = True


@dataclass
class Measurement:
    outcomes: list[CaseOutcome]

    @property
    def share(self) -> float:
        return sum(o.named for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    @property
    def absent_hints(self) -> int:
        return sum(len(o.absent) for o in self.outcomes)

    @property
    def identical(self) -> int:
        return sum(len(o.identical) for o in self.outcomes)

    @property
    def errors(self) -> list[CaseOutcome]:
        return [o for o in self.outcomes if o.status == "error"]

    @property
    def met(self) -> bool:
        ok = not (self.absent_hints or self.identical or self.errors)
        return ok and self.share >= GOAL_SHARE


def measure(cases: list[LabeledCase], results: dict[str, ExerciseResult]) -> Measurement:
    outcomes = []
    for c in cases:
        ex = results[c.id]
        first, points = first_message(ex), f"{ex.score:g}/{ex.max_score:g}"
        found = [(where, hint, absent_causes(c.labels, hint)) for where, hint in hints(ex)]
        absent = [one for one in found if one[2]]
        named = names_cause(c.labels, first)
        labels, lost = c.labels, ex.score < ex.max_score
        outcome = CaseOutcome(c.id, labels.causes, labels.seen_in, ex.status, points, named, first)
        outcome.absent, outcome.identical = absent, identical_pairs(ex)
        outcome.header_problems, outcome.lost_points = problems(c.case, ex), lost
        outcomes.append(outcome)
    return Measurement(outcomes)


def _indented(text: str, limit: int = 700) -> str:
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return "\n".join("      " + line for line in text.splitlines())


def by_kind(m: Measurement) -> dict[str, Measurement]:
    """The measurement split by kind of case: each case under its first labeled cause."""
    kinds: dict[str, list[CaseOutcome]] = {}
    for o in m.outcomes:
        kinds.setdefault(o.causes[0] if o.causes else "?", []).append(o)
    return {kind: Measurement(outcomes) for kind, outcomes in sorted(kinds.items())}


def kinds_table(m: Measurement) -> list[str]:
    """One line per kind of case: named, absent-cause hints, identical pairs, errors."""
    lines = ["per kind (named / absent-cause hints / identical pairs / errors):"]
    for kind, part in by_kind(m).items():
        named = sum(o.named for o in part.outcomes)
        lines.append(
            f"  {kind:<22} {named}/{len(part.outcomes)} named, {part.absent_hints} absent, "
            f"{part.identical} identical, {len(part.errors)} errors"
        )
    return lines


def report_text(
    m: Measurement, folder: Path = CASES_DIR, half: str = "working", details: bool = True
) -> str:
    """The figures of one half, overall and per kind; with ``details``, each case that misses
    a goal too (what the held-out half's rule keeps from whoever changes the diagnosis)."""
    n = len(m.outcomes)
    named = sum(o.named for o in m.outcomes)
    kinds = len({cause for o in m.outcomes for cause in o.causes})
    lines = [
        f"{half} half: {n} cases, {kinds} kinds of cause ({folder.relative_to(ROOT)})",
        f"first message names the labeled cause: {named}/{n} = {m.share:.0%} (goal >= "
        f"{GOAL_SHARE:.0%})",
        f"hints naming a cause the answer does not have: {m.absent_hints} (goal 0)",
        f"identical Expected/Got or Before/After pairs: {m.identical} (goal 0)",
        f"error verdicts: {len(m.errors)} (goal 0)",
        *kinds_table(m),
    ]
    if not details:
        return "\n".join(lines)
    missed = [o for o in m.outcomes if not o.named]
    if missed:
        lines.append("\ncases whose first message does not name the cause:")
        for o in missed:
            lines.append(f"  {o.id} [{', '.join(o.causes)}] {o.status} {o.points}")
            lines.append(_indented(o.first or "(no failing check)"))
    absent = [o for o in m.outcomes if o.absent]
    if absent:
        lines.append("\nhints naming an absent cause:")
        for o in absent:
            for where, hint, wrong in o.absent:
                said = f"{where}: names {', '.join(wrong)}"
                lines.append(f"  {o.id} [{', '.join(o.causes)}] - {said}")
                lines.append(_indented(hint, 300))
    pairs = [o for o in m.outcomes if o.identical]
    if pairs:
        lines.append("\nidentical pairs:")
        lines += [f"  {o.id} - {where}: {text}" for o in pairs for where, text in o.identical]
    if m.errors:
        lines.append("\nerror verdicts:")
        lines += [f"  {o.id}: {o.first.splitlines()[0] if o.first else ''}" for o in m.errors]
    headers = [o for o in m.outcomes if o.header_problems or not o.lost_points]
    if headers:
        lines.append("\nverdicts that differ from the headers (expect-failing, lost points):")
        for o in headers:
            lines += [f"  {o.id}: {p}" for p in o.header_problems or ["full marks"]]
    return "\n".join(lines)


def measure_half(
    half: str, jobs: int = 1, max_examples: int | None = None, details: bool = True
) -> bool:
    """Grade and print one half of the set; True when its goals are met."""
    folder = HALVES[half]
    cases = labeled_cases(folder)
    unknown = sorted({c for case in cases for c in case.labels.causes} - CAUSES)
    if unknown:
        print(f"unknown cause ids in the headers: {', '.join(unknown)}")
    m = measure(cases, grade_all(cases, jobs, max_examples))
    print(report_text(m, folder, half, details))
    return m.met and not unknown


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-j", "--jobs", type=int, default=1, help="judge processes (default 1)")
    p.add_argument("--max-examples", type=int, default=None, help="examples per check")
    p.add_argument(
        "--half", choices=sorted(HALVES), default=None, help="measure only this half (default both)"
    )
    p.add_argument(
        "--figures-only",
        action="store_true",
        help="print the figures, not the cases behind them (for whoever changes the diagnosis)",
    )
    p.add_argument("--check", action="store_true", help="exit 1 when the goals are not met")
    args = p.parse_args(argv)
    met = []
    for number, half in enumerate([args.half] if args.half else list(HALVES)):
        if number:
            print()
        met.append(measure_half(half, args.jobs, args.max_examples, not args.figures_only))
    return 1 if args.check and not all(met) else 0


if __name__ == "__main__":
    sys.exit(main())
