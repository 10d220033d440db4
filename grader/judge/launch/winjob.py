"""Windows: each spawned worker in a job object of its own, Windows' stand-in for resource
limits and process groups (it has neither). The job bounds the memory its processes commit,
their CPU time and how many processes it holds, and ends every process in it when the grader
kills the worker or lets go of the job (``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``): what a
student's code started goes with its worker.

A worker is put in its job right after it starts, while it imports torch and before it imports
the student's file, so no student code runs outside it. Where the job cannot be made (an old
Windows, a grader already inside a job that forbids nesting), the worker runs without it and
the grade says that this limit is off. Wine (bench/windows_check.py) ends a job's processes
but enforces none of its limits: those hold on Windows only, as Windows documents them.
"""

from __future__ import annotations

import ctypes
from ctypes import wintypes
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.protocol.limits import Limits

EXTENDED_LIMITS = 9  # JobObjectExtendedLimitInformation
PROCESS_TIME = 0x0002
ACTIVE_PROCESS = 0x0008
PROCESS_MEMORY = 0x0100
KILL_ON_JOB_CLOSE = 0x2000
# What a worker commits before student code runs (the interpreter, torch, the grader), added to
# the limit a worker's own memory is given: ``Limits.memory_mb`` counts beyond that baseline.
BASELINE_MB = 1024


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in ("Reads", "Writes", "Others", "ReadBytes", "WriteBytes", "OtherBytes")
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def limits_for(limits: Limits) -> _ExtendedLimits:
    """The job's limits: each process's committed memory and CPU time, the number of
    processes, and the end of them all when the job's last handle closes."""
    info = _ExtendedLimits()
    flags = PROCESS_TIME | ACTIVE_PROCESS | PROCESS_MEMORY | KILL_ON_JOB_CLOSE
    info.BasicLimitInformation.LimitFlags = flags
    info.BasicLimitInformation.PerProcessUserTimeLimit = int(limits.cpu_s * 10**7)  # 100 ns
    info.BasicLimitInformation.ActiveProcessLimit = limits.max_processes
    info.ProcessMemoryLimit = (limits.memory_mb + BASELINE_MB) * 2**20
    return info


class Job:
    """One worker's job object; ``kill`` ends every process in it and lets go of it."""

    def __init__(self, process_handle: int, limits: Limits):
        kernel32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        self._kernel32 = kernel32
        self._handle = kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise OSError(ctypes.get_last_error(), "CreateJobObjectW failed")  # type: ignore[attr-defined]
        info = limits_for(limits)
        made = kernel32.SetInformationJobObject(
            wintypes.HANDLE(self._handle), EXTENDED_LIMITS, ctypes.byref(info), ctypes.sizeof(info)
        ) and kernel32.AssignProcessToJobObject(
            wintypes.HANDLE(self._handle), wintypes.HANDLE(process_handle)
        )
        if not made:
            error = ctypes.get_last_error()  # type: ignore[attr-defined]
            self.kill()
            raise OSError(error, "the worker could not be put in a job object")

    def kill(self) -> None:
        handle, self._handle = self._handle, None
        if handle:
            self._kernel32.TerminateJobObject(wintypes.HANDLE(handle), 1)
            self._kernel32.CloseHandle(wintypes.HANDLE(handle))
