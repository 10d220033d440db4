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
    "ctypes": ("import ctypes; ctypes.c_int.from_address(id(watched))", tripwire.CTYPES),
    "own memory": ("open('/proc/self/mem', 'rb')", tripwire.MEMORY),
    "own memory by name": ("os.chdir('/proc/self'); os.open('mem', os.O_RDONLY)", tripwire.MEMORY),
    "the hook itself": (  # reachable through gc, which is no act on the grader; changing it is
        "import gc; [setattr(o, '__defaults__', None) for o in gc.get_objects() "
        "if getattr(o, '__name__', '') == 'tripwire']",
        tripwire.CODE,
    ),
}


def test_the_act_is_told_with_the_students_line_before_the_end(tmp_path):
    """``teller``: the hook says what it saw and the student's line that did it, then ends."""
    student = tmp_path / "answer.py"
    student.write_text("import sys\nx = 1\nsys.modules['__main__'].watched.__defaults__ = (2,)\n")
    program = textwrap.dedent(
        f"""
        import runpy, sys
        from grader.worker import tripwire

        def watched(a=1):
            return a

        told = []
        tell = tripwire.teller({str(student)!r}, told.append)

        def show(status, _tell=tell, _told=told):
            _tell(status)
            print(_told[0]["tampered"], flush=True)

        tripwire.arm([watched], show)
        runpy.run_path({str(student)!r})
        print("went on")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == tripwire.CODE, done.stderr
    assert "it rewrote the code or defaults of one of the grader's functions" in done.stdout
    assert "line 3 of answer.py: sys.modules['__main__'].watched.__defaults__ = (2,)" in done.stdout
    assert "went on" not in done.stdout


def run(code: str) -> subprocess.CompletedProcess:
    program = ARMED + textwrap.dedent(code) + "\nprint('went on')\n"
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )


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
        # what libraries and debugging habits do, none of it an act on the grader:
        import gc, cProfile, concurrent.futures, time
        tensors = [o for o in gc.get_objects() if torch.is_tensor(o)]  # leak hunting
        gc.get_referrers(watched); gc.get_referents(watched)
        sys.settrace(lambda *a: None); sys.settrace(None)
        sys.setprofile(lambda *a: None); sys.setprofile(None)
        threading.setprofile(lambda *a: None); threading.setprofile(None)
        cProfile.run("sum(range(10))")
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            assert list(pool.map(abs, [-1, -2])) == [1, 2]
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        assert watched() == 1
        """
    )
    assert done.returncode == 0, done.stderr
    assert "went on" in done.stdout


# What llvmlite and numba do with ctypes as they load (``import numba``), written as a library.
LIBRARY_CTYPES = """
import ctypes, ctypes.util
own = ctypes.CDLL(ctypes.util.find_library("c"))  # its own library, loaded ...
own.strlen, own.memcpy  # ... and its symbols resolved (llvmlite: hundreds of these)
buf = ctypes.create_string_buffer(16)
ctypes.c_int.from_address(ctypes.addressof(buf)).value = 1  # its own memory, written
ctypes.string_at(ctypes.addressof(buf), 4)
class Secret(ctypes.Structure):
    _fields_ = [("k0", ctypes.c_ulong)]
Secret.in_dll(ctypes.pythonapi, "_Py_HashSecret")  # numba reads the hash secret
"""


def test_a_librarys_own_ctypes_use_is_its_own(tmp_path):
    """``import numba`` is not tampering: a library (installed code: site-packages, the
    standard library) resolving and using its own symbols and memory is left alone."""
    (tmp_path / "jitlib.py").write_text(LIBRARY_CTYPES)
    program = (
        ARMED.replace(
            "tripwire.arm([watched])", f"tripwire.arm([watched], None, ({str(tmp_path) + '/'!r},))"
        )
        + f"sys.path.insert(0, {str(tmp_path)!r})\nimport jitlib\nprint('went on')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "went on" in done.stdout


@pytest.mark.parametrize(
    "act",
    [
        "ctypes.c_int.from_address(id(watched))",
        "ctypes.pythonapi.Py_IncRef",
        "ctypes.string_at(id(watched), 8)",
    ],
)
def test_the_same_acts_in_the_students_code_still_end_it(act, tmp_path):
    """Installed code is told apart by where it lives: the student's own ``from_address``,
    ``string_at`` or C-API lookup is still an act on the grader's memory."""
    program = (
        ARMED.replace(
            "tripwire.arm([watched])", f"tripwire.arm([watched], None, ({str(tmp_path) + '/'!r},))"
        )
        + f"import ctypes\nctypes.CDLL(None).getpid()  # another library's symbol: fine\n{act}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program + "print('went on')\n"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == tripwire.CTYPES, done.stderr
    assert "went on" not in done.stdout
