"""4.1 answered with the judge's own counting code, read past the worker's Python refusals:
the checks' file opened relative to a descriptor of the pack's folder (``dir_fd``), printed by
``cat``, or read by a child interpreter started with ``-I`` (none of the worker's finders or
audit hooks are there). Landlock never grants the judge-only files to the worker, nor to what
it starts: every way fails, and the answer falls back to a wrong count (no points)."""

# exercise: 4.1
# expect-status: failed
# needs: landlock

import ast
import os
import subprocess
import sys

PACK = list(sys.modules["llm_pack"].__path__)[0]
CHECK = os.path.join(PACK, "checks", "gpt_reference.py")
CHILD = (
    "import importlib.util; "
    "print(open(importlib.util.find_spec('llm_pack.checks.gpt_reference').origin).read())"
)


def _by_dir_fd():
    fd = os.open(PACK, os.O_RDONLY)
    try:
        opener = lambda path, flags: os.open(path, flags, dir_fd=fd)  # noqa: E731
        with open("checks/gpt_reference.py", opener=opener) as f:
            return f.read()
    finally:
        os.close(fd)


def _run(argv):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return done.stdout if done.returncode == 0 else ""


def _judge_source():
    ways = [
        _by_dir_fd,
        lambda: _run(["cat", CHECK]),
        lambda: _run([sys.executable, "-I", "-c", CHILD]),
        lambda: _run([os.path.join(sys.base_prefix, "bin", "python3"), "-I", "-c", CHILD]),
    ]
    for way in ways:
        try:
            text = way()
        except Exception:
            continue
        if "def feedforward_count" in text:
            return text
    return ""


def _judge_functions(text):
    """The judge's two counting functions, taken out of its module's text."""
    found = {}
    if text:
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name in (
                "feedforward_count",
                "attention_count",
            ):
                exec(compile(ast.Module([node], []), "judge", "exec"), found)
    return found.get("feedforward_count"), found.get("attention_count")


_FEEDFORWARD, _ATTENTION = _judge_functions(_judge_source())


def feedforward_params(cfg):
    return _FEEDFORWARD(cfg) if _FEEDFORWARD else 0


def attention_params(cfg):
    return _ATTENTION(cfg) if _ATTENTION else 0
