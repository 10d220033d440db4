"""The names a notebook statement binds and reads (``grader.intake.names``), found with ``ast``
alone so that every Python from 3.10 to 3.13 picks the same statements for an exercise: the
tricky cases one by one, small programs drawn by hypothesis compared with the ``symtable`` code
intake used before (on Python 3.11, where that code was right), and the notebook of issue 31
(a comprehension's loop variable at module level)."""

from __future__ import annotations

import ast
import symtable
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from nbsupport import solution_source, write_notebook
from support import TEST_MAX_EXAMPLES, grade

from grader.intake.cells import python_cell
from grader.intake.names import MAX_DEPTH, statement_names
from grader.intake.notebook import notebook_submission, statements

ASSIGNMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def names_of(source: str) -> tuple[set[str], set[str], set[str]]:
    """What ``source`` binds, reads now and reads later (a name it binds and reads is in both:
    notebook intake takes a statement's own names out of its reads, see ``_statement``)."""
    names = statement_names(ast.parse(source))
    return set(names.binds), set(names.reads_now), set(names.reads_later)


# --- the tricky cases, one by one ------------------------------------------------------------

CASES = [
    # comprehensions at module level: loop variables are the comprehension's, the body runs now
    (
        'G = {name: {**B, "e": e} for name, (e, n) in _S.items()}',
        {"G"},
        {"_S", "B"},
        set(),
    ),
    ("x = [x for _ in r]", {"x"}, {"x", "r"}, set()),
    ("[[j for j in i] for i in r]", set(), {"r"}, set()),
    ("[[i + j for j in J] for i in r if i]", set(), {"r", "J"}, set()),
    ("s = sum(v * w for v in V for w in W)", {"s"}, {"sum", "V", "W"}, set()),
    # ... and in functions: the outermost iterable is read in the function
    ("def f():\n    return [x for x in x]", {"f"}, set(), {"x"}),
    ("def f(r):\n    return {k: v + K for k, v in r}", {"f"}, set(), {"K"}),
    ("def f():\n    [y for y in r]\n    return y", {"f"}, set(), {"r", "y"}),
    # walrus: binds in the enclosing function or module, also from a comprehension
    ("[y := i for i in r]", {"y"}, {"r"}, set()),
    ("while (n := n - 1): pass", {"n"}, {"n"}, set()),
    ("def f():\n    [y := i for i in r]\n    return y", {"f"}, set(), {"r"}),
    ("def f():\n    global y\n    [y := 2 for i in r]", {"f"}, set(), {"r"}),
    ("x: (y := 1) = 2", {"x", "y"}, set(), set()),
    # global / nonlocal
    ("def f():\n    global x\n    return x", {"f"}, set(), {"x"}),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = y", {"f"}, set(), {"y"}),
    (
        "def f():\n    x = 1\n    def g():\n        global x\n        def h():\n"
        "            return x",
        {"f"},
        set(),
        {"x"},
    ),
    ("if c:\n    global x\n    x = 1", {"x"}, {"c"}, set()),
    # class bodies run now; their names are not visible in their methods
    (
        "class A(B, metaclass=M):\n    c = C\n    def m(self):\n        return c, D",
        {"A"},
        {"B", "M", "C"},
        {"c", "D"},
    ),
    (
        "class A:\n    class B:\n        x = Y\n    def m(self):\n        return B",
        {"A"},
        {"Y"},
        {"B"},
    ),
    ("class A:\n    def m(self):\n        return __class__, super()", {"A"}, set(), {"super"}),
    ("class A:\n    def m(self):\n        return __p", {"A"}, set(), {"_A__p"}),
    (
        "def f():\n    x = 1\n    class C:\n        print(x)\n        def m(self):\n"
        "            return x",
        {"f"},
        set(),
        {"print"},
    ),
    # lambdas, defaults, decorators, annotations
    ("g = lambda a, b=B: a + b + C", {"g"}, {"B"}, {"C"}),
    ("g = lambda: lambda a=A: a + Z", {"g"}, set(), {"A", "Z"}),
    (
        "@dec(X)\ndef f(a=D, *args, b: T = E, **kw) -> R:\n    return a, args, b, kw, G",
        {"f"},
        {"dec", "X", "D", "T", "E", "R"},
        {"G"},
    ),
    ("x: int", {"x"}, {"int"}, set()),
    # del, except ... as, with ... as, for, imports
    ("del x", {"x"}, set(), set()),
    ("del cfg['drop_rate']", set(), {"cfg"}, set()),
    ("try:\n    pass\nexcept E as e:\n    print(e)", {"e"}, {"E", "print", "e"}, set()),
    ("with open(p) as (f, g):\n    pass", {"f", "g"}, {"open", "p"}, set()),
    (
        "for name, cfg in C.items():\n    print(total(cfg))",
        {"name", "cfg"},
        {"C", "print", "total", "cfg"},
        set(),
    ),
    ("import a.b.c, d.e as f", {"a", "f"}, set(), set()),
    ("from m import *", set(), set(), set()),
    ("x += 1", {"x"}, set(), set()),
    ("a[i], b = c", {"b"}, {"a", "i", "c"}, set()),
    # match
    (
        "match p:\n    case [a, *rest] if a > Z:\n        pass\n    case {'k': v, **kw}:\n"
        "        pass\n    case Point(x=px) as q:\n        pass\n    case K.V:\n        pass",
        {"a", "rest", "v", "kw", "px", "q"},
        {"p", "a", "Z", "Point", "K"},
        set(),
    ),
]


@pytest.mark.parametrize(("source", "binds", "now", "later"), CASES)
def test_the_names_a_statement_binds_and_reads(source, binds, now, later):
    assert names_of(source) == (binds, now, later)


def test_functions_that_assign_through_global_are_told_apart():
    names = statement_names(ast.parse("def setup():\n    global CFG\n    CFG = {}"))
    assert names.binds == {"setup"} and names.binds_global == {"CFG"}


@pytest.mark.parametrize(
    "source",
    [
        "def f(x, x): pass",
        "lambda x, x: 1",
        "def f():\n    x = 1\n    global x",
        "def f():\n    print(x)\n    global x",
        "def f(x):\n    global x",
        "def f():\n    global x\n    nonlocal x",
        "def f():\n    global x\n    x: int = 1",
        "nonlocal x",
        "def f():\n    def g():\n        nonlocal x",
        "class A:\n    [y := 1 for i in r]",
        "[i for i in (y := r)]",
        "[i for i in (lambda: (j := 1))()]",
        "[i for i in r if (j := i) for j in s]",
        "def f():\n    [x := 1 for x in r]",
        "[(yield) for x in r]",
        "def f():\n    from m import *",
        "from __future__ import braces",
        "from __future__ import no_such_feature",
    ],
)
def test_what_the_compiler_rejects_is_a_syntax_error(source):
    with pytest.raises(SyntaxError):
        statement_names(ast.parse(source))


def test_code_nested_too_deep_is_a_recursion_error():
    assert names_of("x = " + "-" * (MAX_DEPTH - 5) + "y") == ({"x"}, {"y"}, set())
    with pytest.raises(RecursionError):
        statement_names(ast.parse("x = " + "-" * (MAX_DEPTH + 5) + "y"))


def test_notebook_statements_keep_the_old_post_processing():
    cell = python_cell(1, 1, (), "x = [x for _ in r]\nfor i in x:\n    y = i + y\n")
    first, loop = statements([cell])
    assert first.defines == first.data == {"x"} and first.uses_now == {"x", "r"}
    assert loop.defines == {"i", "y"} and loop.uses_now == {"x"} and not loop.data
    broken = python_cell(2, 2, (), "def f():\n    x = 1\n    global x\n")
    (skipped,) = statements([broken])
    assert not skipped.defines and not skipped.mutates  # not a usable statement


# --- small programs, compared with the symtable code intake had (Python 3.11) -----------------

COMPREHENSION_TABLES = {"listcomp", "setcomp", "dictcomp", "genexpr"}


def _global_uses(table: symtable.SymbolTable) -> set[str]:
    names = set()
    for child in table.get_children():
        for sym in child.get_symbols():
            if sym.is_referenced() and sym.is_global():
                names.add(sym.get_name())
        names |= _global_uses(child)
    return names


def symtable_sets(text: str, node: ast.stmt, corrected: bool = False):
    """What ``_statement`` computed with ``symtable`` before (``None``: not a usable statement);
    ``corrected``: with the answers where 3.11's symtable is the odd one out made right (a
    module-level comprehension's or class body's reads are read now, such a comprehension's
    walrus binds, no ``listcomp`` is bound by being read), as ``grader.intake.names`` says."""
    try:
        table = symtable.symtable(text + "\n", "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defines, uses_now, uses_later = set(), set(), _global_uses(table)
    for sym in table.get_symbols():
        name = sym.get_name()
        if sym.is_assigned() or sym.is_imported() or (sym.is_namespace() and not corrected):
            defines.add(name)
        if sym.is_referenced():
            uses_now.add(name)
    if corrected:
        uses_later = set()

        def walk(parent: symtable.SymbolTable, now: bool) -> None:
            for child in parent.get_children():
                comprehension = ".0" in child.get_identifiers()  # its implicit argument
                runs_now = now and (comprehension or child.get_type() == "class")
                for sym in child.get_symbols():
                    if sym.is_referenced() and sym.is_global():
                        (uses_now if runs_now else uses_later).add(sym.get_name())
                    if runs_now and comprehension and sym.is_declared_global():
                        defines.add(sym.get_name())  # a walrus's target
                walk(child, runs_now)

        walk(table, True)
    if not isinstance(node, ASSIGNMENTS):
        uses_now -= defines
    return defines, uses_now, uses_later - defines


def names_sets(text: str, node: ast.stmt):
    """The same three sets from ``grader.intake.names``, as ``_statement`` computes them now."""
    try:
        names = statement_names(ast.parse(text + "\n"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defines, uses_now = set(names.binds), set(names.reads_now)
    if not isinstance(node, ASSIGNMENTS):
        uses_now -= defines
    return defines, uses_now, set(names.reads_later) - defines


NAMES = ["a", "b", "x", "y", "f", "C", "__p", "super"]


def identifiers():
    return st.sampled_from(NAMES)


def indented(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def parameter_lists(depth: int):
    """``a, b=<expr>, *x, y`` and the like (some with a duplicate, which the compiler rejects)."""
    parameter = st.tuples(identifiers(), st.none() | expressions(depth)).map(
        lambda p: p[0] if p[1] is None else f"{p[0]}={p[1]}"
    )
    star = st.sampled_from(["", "*x, ", "*, y=1, ", "**y, "])
    unique = st.lists(parameter, max_size=3, unique_by=lambda p: p.split("=")[0])
    return st.tuples(unique | st.lists(parameter, max_size=3), star).map(_parameters)


def _parameters(drawn: tuple[list[str], str]) -> str:
    plain = [p for p in drawn[0] if "=" not in p] + [p for p in drawn[0] if "=" in p]
    star = drawn[1]
    if star.startswith("**"):
        return ", ".join(plain + [star.rstrip(", ")])
    return (star + ", ".join(plain)).rstrip(", ") if star else ", ".join(plain)


def comprehensions(depth: int):
    inner = expressions(depth - 1)
    target = identifiers() | st.tuples(identifiers(), identifiers()).map("{0[0]}, {0[1]}".format)
    generator = st.tuples(target, inner, st.none() | inner).map(
        lambda g: f"for {g[0]} in {g[1]}" + (f" if {g[2]}" if g[2] else "")
    )
    shape = st.sampled_from(["[{e} {g}]", "{{{e} {g}}}", "({e} {g})", "{{{e}: {e2} {g}}}"])
    return st.tuples(shape, inner, inner, st.lists(generator, min_size=1, max_size=2)).map(
        lambda c: c[0].format(e=c[1], e2=c[2], g=" ".join(c[3]))
    )


def expressions(depth: int = 2):
    """Names, calls, attributes, lambdas, comprehensions, walrus, yield, nested to ``depth``."""
    leaf = identifiers() | st.just("1")
    if depth <= 0:
        return leaf
    inner = expressions(depth - 1)
    return st.one_of(
        leaf,
        leaf,
        st.tuples(inner, inner).map("{0[0]} + {0[1]}".format),
        st.tuples(inner, st.lists(inner, max_size=2)).map(lambda c: f"{c[0]}({', '.join(c[1])})"),
        inner.map("({}).attr".format),
        st.tuples(inner, inner).map("{0[0]}[{0[1]}]".format),
        st.tuples(parameter_lists(depth - 1), inner).map("(lambda {0[0]}: {0[1]})".format),
        comprehensions(depth),
        st.tuples(identifiers(), inner).map("({0[0]} := {0[1]})".format),
        inner.map("(yield {})".format),
    )


def simple_statements(depth: int):
    expr = expressions(depth)
    target = st.one_of(
        identifiers(),
        st.tuples(identifiers(), identifiers()).map("{0[0]}, {0[1]}".format),
        st.tuples(identifiers(), expr).map("{0[0]}[{0[1]}]".format),
        identifiers().map("{}.attr".format),
    )
    return st.one_of(
        expr,
        st.tuples(target, expr).map("{0[0]} = {0[1]}".format),
        st.tuples(identifiers(), expr).map("{0[0]} += {0[1]}".format),
        st.tuples(identifiers(), expr, st.none() | expr).map(
            lambda a: f"{a[0]}: {a[1]}" + (f" = {a[2]}" if a[2] else "")
        ),
        st.lists(identifiers(), min_size=1, max_size=2).map(lambda n: "del " + ", ".join(n)),
        st.tuples(st.sampled_from(["global", "nonlocal"]), identifiers()).map(" ".join),
        expr.map("return {}".format),
        identifiers().map("from m import {}".format),
        st.sampled_from(["import x.y", "import a as f", "from m import *", "pass"]),
    )


def bodies(depth: int):
    return st.lists(statement_lines(depth - 1), min_size=1, max_size=3).map(
        lambda stmts: [line for lines in stmts for line in lines]
    )


def statement_lines(depth: int = 3):
    """One statement as lines: a simple one, or (``depth`` > 0) a compound one."""
    simple = simple_statements(min(depth, 2)).map(lambda s: [s])
    return simple if depth <= 0 else compound_statements(depth) | simple


def compound_statements(depth: int):
    """A def, class, for, if, with, try or match, as lines, whose bodies are drawn as
    ``statement_lines`` one level shallower."""
    body, expr = bodies(depth), expressions(1)
    decorators = st.lists(expr.map("@{}".format), max_size=1)
    return st.one_of(
        st.tuples(decorators, identifiers(), parameter_lists(1), body).map(
            lambda d: [*d[0], f"def {d[1]}({d[2]}):", *indented(d[3])]
        ),
        st.tuples(decorators, identifiers(), st.lists(expr, max_size=2), body).map(
            lambda c: [*c[0], f"class {c[1]}({', '.join(c[2])}):", *indented(c[3])]
        ),
        st.tuples(identifiers(), expr, body).map(
            lambda f: [f"for {f[0]} in {f[1]}:", *indented(f[2])]
        ),
        st.tuples(expr, body, body).map(
            lambda i: [f"if {i[0]}:", *indented(i[1]), "else:", *indented(i[2])]
        ),
        st.tuples(expr, identifiers(), body).map(
            lambda w: [f"with {w[0]} as {w[1]}:", *indented(w[2])]
        ),
        st.tuples(body, identifiers(), body, body).map(
            lambda t: [
                "try:",
                *indented(t[0]),
                f"except E as {t[1]}:",
                *indented(t[2]),
                "else:",
                *indented(t[3]),
            ]
        ),
        st.tuples(expr, identifiers(), identifiers(), body).map(
            lambda m: [
                f"match {m[0]}:",
                f"    case [{m[1]}, *{m[2]}] | {{'k': {m[1]}, **{m[2]}}}:",
                *indented(indented(m[3])),
            ]
        ),
    )


def programs():
    """The text of one top-level statement, compound more often than not."""
    return (compound_statements(3) | statement_lines(3)).map("\n".join)


def parsed(text: str) -> ast.stmt:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        assume(False)
    return tree.body[0]


ORACLE = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="the symtable code is the oracle only on Python 3.11: 3.12 inlined comprehensions "
    "(PEP 709) and its symtable reports their loop variables as globals",
)
PROGRAMS = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@ORACLE
@PROGRAMS
@given(programs())
def test_the_names_are_those_of_the_symtable_code_with_its_three_corrections(text):
    node = parsed(text)
    expected = symtable_sets(text, node, corrected=True)
    assert names_sets(text, node) == expected
    (statement,) = statements([python_cell(1, 1, (), text)])  # what intake itself computes
    found = (statement.defines, statement.uses_now, statement.uses_later)
    assert found == (expected or (set(), set(), set()))


@ORACLE
@PROGRAMS
@given(programs())
def test_the_names_differ_from_the_old_symtable_code_only_as_documented(text):
    node = parsed(text)
    new, old = names_sets(text, node), symtable_sets(text, node)
    assert (new is None) == (old is None)
    if new is not None:
        walrus = {n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr)}
        assert new[0] ^ old[0] <= walrus | COMPREHENSION_TABLES
        # reads move between now and later, or are kept where the statement also binds them
        assert (new[1] | new[2]) ^ (old[1] | old[2]) <= new[0] | old[0]


def test_an_assignment_keeps_the_read_of_its_own_name_in_a_comprehension():
    """``x = [x for _ in r]`` reads the earlier ``x``: 3.11's symtable code lost that read."""
    text = "x = [x for _ in r]"
    node = parsed(text)
    if sys.version_info[:2] == (3, 11):
        assert symtable_sets(text, node) == ({"x"}, {"r"}, set())
    assert names_sets(text, node) == ({"x"}, {"x", "r"}, set())


# --- issue 31: a module-level comprehension's loop variable is not a global -----------------


def test_a_demo_loop_over_the_configs_is_not_pulled_into_4_2(tmp_path):
    """The notebook shape of issue 31: ``GPT2_CONFIGS = {name: ... for name, ... in
    _SIZES.items()}``, then a demo cell ``for name, cfg in GPT2_CONFIGS.items(): ...``. On 3.12
    the symtable code took ``name`` for a global the comprehension reads, so the demo (which
    builds GPT-2 small to XL) went into 4.2's file and ran out of memory at import."""
    demo = "for name, cfg in GPT2_CONFIGS.items():\n    print(total_params(cfg))"
    path = write_notebook(
        tmp_path / "issue31.ipynb",
        [
            ("markdown", "## Exercise 4.2"),
            ("code", solution_source("4.2")),
            ("code", demo),
        ],
    )
    sub = notebook_submission(path)
    try:
        text = sub.files["4.2"].read_text(encoding="utf-8")
        assert "for name, (emb, layers, heads) in _SIZES.items()" in text
        assert "print(" not in text and "for name, cfg" not in text
        assert any(n.startswith("4.2: graded from cell 2 ") for n in sub.notes), sub.notes
        result = grade(sub, ["4.2"], max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    (ex,) = result.exercises
    assert ex.status == "passed" and ex.score == ex.max_score


def test_the_configs_comprehension_reads_no_name():
    binds, now, later = names_of(
        "GPT2_CONFIGS = {\n"
        '    name: {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}\n'
        "    for name, (emb, layers, heads) in _SIZES.items()\n}"
    )
    assert binds == {"GPT2_CONFIGS"} and now == {"GPT_CONFIG_124M", "_SIZES"} and not later
