"""The hostile corpus (tests/hostile/): submissions that attack the grader.

Each case is one student file with a header: ``# exercise:``, ``# expect-status:``, optional
``# expect-message:`` (a substring of the exercise's messages) and ``# needs:`` (layers of
which one must be on for the attack to be stopped; ``process-limit`` and ``tree-kill`` are
met in several ways). Placeholders (``@MARKER@``, ``@JUDGE_PID@``, ``@SUBMISSION@``, ports)
are filled in per test. Every case is graded through the ``grade`` command line, in this
process, with the hostile exercise and one correct exercise; the test then checks the
verdicts, the exit status, that no process was left behind and that no file outside the
worker's scratch changed. The last tests repeat a selection with sandbox layers turned off,
and through the spawn launcher.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from support import ROOT, SOLUTION, make_submission

import grader
import grader.commands.cli
import reference
from grader.judge.launch.forkserver import ForkServer
from grader.judge.launch.spawn import start_spawn
from grader.judge.launch.starter import SandboxStarter, default_server, supported
from grader.protocol.limits import Limits
from grader.shared.registry import BY_ID, EXERCISES

HOSTILE = ROOT / "tests" / "hostile"
LIMITS = Limits(call_timeout_s=4.0, import_timeout_s=4.0, exercise_budget_s=60.0, memory_mb=1024)
SPAWN_LIMITS = Limits(
    call_timeout_s=4.0, import_timeout_s=40.0, exercise_budget_s=60.0, memory_mb=1024
)
GRADED = [e.id for e in EXERCISES if importlib.util.find_spec(f"llm_pack.checks.{e.module}")]
OTHER = {"3.1": "4.1", "4.1": "3.1", "4.2": "4.1", "4.3": "4.1"}

pytestmark = pytest.mark.skipif(not supported(), reason="the fork server needs Linux")


@dataclass(frozen=True)
class HostileCase:
    path: Path
    exercise: str
    status: str
    messages: tuple[str, ...]
    needs: tuple[frozenset[str], ...]  # each: layers of which one must be on

    @property
    def name(self) -> str:
        return self.path.stem


def hostile_cases() -> list[HostileCase]:
    cases = []
    for path in sorted(HOSTILE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        field = dict(re.findall(r"^# (exercise|expect-status): *(\S+)", text, re.M))
        cases.append(
            HostileCase(
                path,
                field["exercise"],
                field["expect-status"],
                tuple(m.strip() for m in re.findall(r"^# expect-message:(.*)$", text, re.M)),
                tuple(
                    frozenset(n.strip().split("|"))
                    for n in re.findall(r"^# needs:(.*)$", text, re.M)
                ),
            )
        )
    return cases


CASES = [c for c in hostile_cases() if c.exercise in GRADED]


def layers_on(starter) -> set[str]:
    """The layers a starter's workers run with, plus the two that several layers provide."""
    if not isinstance(starter, SandboxStarter):
        return set()
    on = {name for name, info in starter.layers().items() if info.get("on")}
    if on & {"cgroup", "nobody"} or os.geteuid() != 0:
        on.add("process-limit")  # RLIMIT_NPROC binds everyone but root
    if on & {"pid", "cgroup", "fork server"}:
        on.add("tree-kill")
    return on


def stoppable(case: HostileCase, on: set[str]) -> bool:
    return all(alternatives & on for alternatives in case.needs)


# --- what a case may have touched ------------------------------------------------------------


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


WATCHED = [
    Path(reference.__file__),
    Path(grader.__file__),
    Path(grader.__file__).parent / "judge" / "engine.py",
    Path(grader.__file__).parent / "judge" / "properties.py",
    Path(torch.__file__),
]
ORIGINALS = {p: p.read_bytes() for p in WATCHED}  # to put back if a breach changed them


def marked_files(marker: str) -> list[Path]:
    """Files outside any scratch that carry the marker (in their name or their text)."""
    found = [p for p in WATCHED if marker in p.read_text(encoding="utf-8", errors="replace")]
    for folder in (
        Path("/tmp"),
        Path("/var/tmp"),
        Path("/dev/shm"),
        Path.home(),
        Path(grader.__file__).parent / "judge" / "checks",
    ):
        found += [p for p in folder.glob(f"*{marker}*")]
    return found


def restore(paths: list[Path]) -> None:
    """Undo what a breach wrote, so that a failing test does not break the repository."""
    for p in paths:
        if p in ORIGINALS:
            p.write_bytes(ORIGINALS[p])
        elif p.is_file():
            p.unlink()


def marker_processes(marker: str) -> list[int]:
    """Processes named with the marker (``comm``) or carrying it on their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if comm == marker or marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def wait_gone(marker: str, timeout: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := marker_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


# --- running a case ----------------------------------------------------------------------------


@dataclass
class Listeners:
    tcp: socket.socket
    udp: socket.socket

    def heard(self) -> bool:
        self.tcp.setblocking(False)
        self.udp.setblocking(False)
        try:
            self.tcp.accept()
            return True
        except BlockingIOError:
            pass
        try:
            self.udp.recv(100)
            return True
        except BlockingIOError:
            return False


@pytest.fixture
def listeners():
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    yield Listeners(tcp, udp)
    tcp.close()
    udp.close()


def fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def build(cases: list[HostileCase], dest: Path, marker: str, listeners: Listeners) -> Path:
    """The solution with each case's file in place of its exercise, placeholders filled in."""
    values = {
        "MARKER": marker,
        "JUDGE_PID": str(os.getpid()),
        "SUBMISSION": str(dest),
        "TCP_PORT": str(listeners.tcp.getsockname()[1]),
        "UDP_PORT": str(listeners.udp.getsockname()[1]),
    }
    staged = dest.parent / f"{dest.name}-staged"
    staged.mkdir()
    replacements = {}
    for case in cases:
        target = staged / BY_ID[case.exercise].filename
        target.write_text(fill(case.path.read_text(encoding="utf-8"), values), encoding="utf-8")
        replacements[case.exercise] = target
    return make_submission(dest, replacements, base=SOLUTION)


def run_cli(
    monkeypatch,
    capsys,
    submission: Path,
    exercises: list[str],
    starter=None,
    limits: Limits = LIMITS,
) -> tuple[int, dict]:
    """``grade SUBMISSION -e ... --format json`` in this process, with test limits."""
    monkeypatch.setattr(grader.commands.cli, "limits_from", lambda args: limits)
    if starter is not None:
        monkeypatch.setattr(grader.commands.cli, "starter_from", lambda args, submission: starter)
    argv = [str(submission), "--format", "json", "--max-examples", "3"]
    for ex in exercises:
        argv += ["-e", ex]
    code = grader.commands.cli.main(argv)
    captured = capsys.readouterr()
    out = captured.out
    assert "{" in out, f"exit status {code}: {captured.err}"
    return code, json.loads(out[out.index("{") :])


def check_outcome(cases, code, result, marker, listeners, submission, before, parent_before):
    """Every assertion a hostile grading must pass (then undo any breach)."""
    try:
        assert code in (0, 1), f"the grader failed: exit status {code}"
        by_id = {e["id"]: e for e in result["exercises"]}
        hostile = {c.exercise for c in cases}
        for case in cases:
            ex = by_id[case.exercise]
            messages = "\n".join(c["message"] for c in ex["checks"])
            assert ex["status"] == case.status, f"{case.name}: {ex['status']}: {messages}"
            for wanted in case.messages:
                assert wanted in messages, f"{case.name}: {wanted!r} not in {messages!r}"
        for ex_id, ex in by_id.items():
            if ex_id not in hostile:
                assert ex["score"] == ex["max_score"], f"{ex_id} lost points: {ex}"
        assert code == (0 if all(e["status"] == "passed" for e in by_id.values()) else 1)
        assert not listeners.heard(), "a worker reached the test's sockets"
        assert not wait_gone(marker), "processes were left behind"
        assert tree_digest(submission) == before, "the submission's files changed"
        assert sorted(os.listdir(submission.parent)) == parent_before
    finally:
        breached = marked_files(marker)
        restore(breached)
    assert not breached, f"files outside the scratch were written: {breached}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_submission(case, tmp_path, monkeypatch, capsys, listeners):
    on = layers_on(SandboxStarter(default_server()))
    if not stoppable(case, on):
        pytest.skip(f"needs one of {[sorted(n) for n in case.needs]}, off here")
    marker = "hx" + secrets.token_hex(5)
    submission = build([case], tmp_path / "sub", marker, listeners)
    before, parent_before = tree_digest(submission), sorted(os.listdir(tmp_path))
    code, result = run_cli(monkeypatch, capsys, submission, [case.exercise, OTHER[case.exercise]])
    check_outcome([case], code, result, marker, listeners, submission, before, parent_before)


def test_template_survives_the_corpus():
    """After every attack, the shared fork server still serves."""
    server = default_server()
    server.wait_ready()
    assert server._process.poll() is None


# --- several hostile files at once, all exercises ---------------------------------------------


def one_per_exercise(cases: list[HostileCase], on: set[str]) -> list[list[HostileCase]]:
    """Groups of stoppable cases with at most one per exercise."""
    groups: list[list[HostileCase]] = []
    for case in cases:
        if not stoppable(case, on):
            continue
        for group in groups:
            if case.exercise not in {c.exercise for c in group}:
                group.append(case)
                break
        else:
            groups.append([case])
    return groups


PICK = ["segfault", "import_infinite_loop", "env_secrets", "trojan_state_dict"]


def test_all_exercises_with_several_hostile_files(tmp_path, monkeypatch, capsys, listeners):
    chosen = [c for c in CASES if c.name in PICK]
    marker = "hx" + secrets.token_hex(5)
    submission = build(chosen, tmp_path / "sub", marker, listeners)
    before, parent_before = tree_digest(submission), sorted(os.listdir(tmp_path))
    code, result = run_cli(monkeypatch, capsys, submission, GRADED)
    assert [e["id"] for e in result["exercises"]] == GRADED
    check_outcome(chosen, code, result, marker, listeners, submission, before, parent_before)


def test_secrets_in_the_graders_environment_stay_out(tmp_path):
    """``grade`` run with secrets in its environment (as CI runs it): the student's error
    message, which lists everything the worker could read, holds none of them."""
    secret = "sk-" + secrets.token_hex(12)
    case = next(c for c in CASES if c.name == "env_secrets")
    values = {"MARKER": "x", "JUDGE_PID": "1", "SUBMISSION": "", "TCP_PORT": "1", "UDP_PORT": "1"}
    staged = tmp_path / BY_ID["4.2"].filename
    staged.write_text(fill(case.path.read_text(encoding="utf-8"), values), encoding="utf-8")
    submission = make_submission(tmp_path / "sub", {"4.2": staged})
    env = {
        **os.environ,
        "GITHUB_TOKEN": secret,
        "AWS_SECRET_ACCESS_KEY": secret,
        "OPENAI_API_KEY": secret,
        "MY_PASSWORD": secret,
        "CI_JOB_TOKEN": secret,
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            str(submission),
            "-e",
            "4.2",
            "-e",
            "4.1",
            "--format",
            "json",
            "--max-examples",
            "3",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode in (0, 1), run.stderr
    result = json.loads(run.stdout)
    message = result["exercises"][1]["checks"][0]["message"]
    assert "secrets:" in message  # the attack ran, and its message reached the report
    assert secret not in run.stdout and secret not in run.stderr


# --- layers off -------------------------------------------------------------------------------

CONFIGS = {
    "no namespaces": {"user", "net", "mount", "pid", "ipc", "nobody"},
    "no landlock": {"landlock"},
    "nothing but limits": {"user", "net", "mount", "pid", "ipc", "nobody", "landlock", "cgroup"},
}
# Per configuration, the attacks that probe what is left (one grading, several files).
LAYER_OFF_PICK = {
    "no namespaces": [
        "write_grader_files",
        "kill_parent",
        "network_tcp",
        "escape_daemon",
        "fork_bomb",
    ],
    "no landlock": ["write_next_to_folder", "network_udp", "kill_parent", "escape_daemon"],
    "nothing but limits": [
        "segfault",
        "output_flood",
        "monkeypatch_judging",
        "import_infinite_loop",
        "escape_daemon",
        "tamper_probe_table",
    ],
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def reduced(request):
    server = ForkServer(disable=CONFIGS[request.param], spares=2).start()
    yield request.param, SandboxStarter(server)
    server.close()


def test_solution_with_layers_off(reduced, tmp_path, monkeypatch, capsys):
    name, starter = reduced
    off = {k for k, v in starter.layers().items() if not v["on"]}
    assert CONFIGS[name] - {"nobody", "cgroup"} <= off  # the layers really are off
    code, result = run_cli(monkeypatch, capsys, SOLUTION, GRADED, starter)
    assert code == 0, result
    assert result["score"] == result["max_score"]


def test_hostile_with_layers_off(reduced, tmp_path, monkeypatch, capsys, listeners):
    name, starter = reduced
    on = layers_on(starter)
    chosen = [c for c in CASES if c.name in LAYER_OFF_PICK[name]]
    for i, group in enumerate(one_per_exercise(chosen, on)):
        marker = "hx" + secrets.token_hex(5)
        submission = build(group, tmp_path / f"sub{i}", marker, listeners)
        before, parent_before = tree_digest(submission), sorted(os.listdir(tmp_path))
        code, result = run_cli(
            monkeypatch, capsys, submission, sorted({c.exercise for c in group} | {"4.1"}), starter
        )
        check_outcome(group, code, result, marker, listeners, submission, before, parent_before)


def test_spawn_launcher(tmp_path, monkeypatch, capsys, listeners):
    """The path of macOS and Windows (a fresh interpreter per worker), forced here."""
    code, result = run_cli(monkeypatch, capsys, SOLUTION, ["3.1", "4.1"], start_spawn, SPAWN_LIMITS)
    assert code == 0 and result["score"] == result["max_score"], result
    picked = ("call_hang", "segfault", "sys_exit_at_import", "tamper_probe_code")
    chosen = [c for c in CASES if c.name in picked]
    for i, group in enumerate(one_per_exercise(chosen, set())):
        marker = "hx" + secrets.token_hex(5)
        submission = build(group, tmp_path / f"sub{i}", marker, listeners)
        before, parent_before = tree_digest(submission), sorted(os.listdir(tmp_path))
        code, result = run_cli(
            monkeypatch,
            capsys,
            submission,
            sorted({c.exercise for c in group} | {"4.1"}),
            start_spawn,
            SPAWN_LIMITS,
        )
        check_outcome(group, code, result, marker, listeners, submission, before, parent_before)
