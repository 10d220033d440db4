"""The worker's tripwire (``grader.worker.tripwire``): each act it watches ends the process at
once with its own status, whatever the student's code does next; what an ordinary answer does
(its own functions rewritten, torch used, files opened) does not. Each case runs in a child
interpreter, since an audit hook cannot be removed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from grader.protocol.boot import TAMPERED
from grader.worker import tripwire

ARMED = """
import os, sys
import torch  # as in a worker: imported before the student's file (some builds look up
              # symbols through ctypes as they load, which the hook would see)
from grader.worker import tripwire

def watched(a=1):
    return a

tripwire.arm([watched])
"""

ACTS = {
    "code swapped": ("watched.__code__ = (lambda a=1: 2).__code__", tripwire.CODE),
    "defaults swapped": ("watched.__defaults__ = (2,)", tripwire.CODE),
    "kwdefaults swapped": ("watched.__kwdefaults__ = {}", tripwire.CODE),
    "gc search": ("import gc; gc.get_referrers(watched)", tripwire.SEARCH),
    "gc walk": ("import gc; gc.get_objects()", tripwire.SEARCH),
    "trace": ("sys.settrace(lambda *a: None)", tripwire.TRACE),
    "profile": (
        "import threading; threading.setprofile(lambda *a: None); sys.setprofile(None)",
        tripwire.TRACE,
    ),  # fmt: skip
    "ctypes": ("import ctypes; ctypes.c_int.from_address(id(watched))", tripwire.CTYPES),
    "own memory": ("open('/proc/self/mem', 'rb')", tripwire.MEMORY),
    "own memory by name": ("os.chdir('/proc/self'); os.open('mem', os.O_RDONLY)", tripwire.MEMORY),
    "the hook itself": (
        "hook = [f for f in [sys.audit] if 0]; "  # the hook is reachable only through gc
        "import gc; [o for o in gc.get_objects() if getattr(o, '__name__', '') == 'tripwire']",
        tripwire.SEARCH,
    ),
}


def run(code: str) -> subprocess.CompletedProcess:
    program = ARMED + textwrap.dedent(code) + "\nprint('went on')\n"
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


@pytest.mark.parametrize("act", ACTS, ids=list(ACTS))
def test_each_act_ends_the_process_with_its_status(act):
    code, status = ACTS[act]
    done = run(f"try:\n    {code}\nexcept BaseException:\n    pass")
    assert done.returncode == status, done.stderr
    assert "went on" not in done.stdout  # not even an exception handler ran after it
    assert status in TAMPERED


def test_an_ordinary_answer_is_left_alone():
    done = run(
        """
        import json, tempfile, threading
        def mine(x=1):
            return x
        mine.__code__ = (lambda x=1: x + 1).__code__  # its own functions are its own
        mine.__defaults__ = (2,)
        class Model(torch.nn.Module):
            pass
        Model.extra = 1
        torch.manual_seed(0)
        y = torch.nn.Linear(4, 4)(torch.randn(2, 4)).sum().item()
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the book's
        with torch.device("meta"):
            torch.nn.Linear(4, 4)
        with tempfile.TemporaryFile() as f:
            f.write(json.dumps({"y": y}).encode())
        t = threading.Thread(target=lambda: None)
        t.start(); t.join()
        assert watched() == 1
        """
    )
    assert done.returncode == 0, done.stderr
    assert "went on" in done.stdout
