"""The bounds put on a worker: the judge chooses them (defaults, the command line,
``grading.toml``), sends them with every worker it starts, and the worker side applies them
(``grader.worker.bounds``) before it imports student code."""

from __future__ import annotations

from dataclasses import dataclass

# What a worker copies of a submission's folder into its sandbox (the student's file first):
# intake refuses an exercise file larger than this, which would reach the worker as missing.
MAX_SUBMISSION_BYTES = 4 * 2**20


@dataclass(frozen=True)
class Limits:
    """Bounds on student code; every one can be changed from the CLI or ``grading.toml``."""

    call_timeout_s: float = 20.0  # one call into student code
    exercise_budget_s: float = 90.0  # all checks of one exercise
    import_timeout_s: float = 20.0  # importing the student's file
    memory_mb: int = 3072  # address space beyond the worker's own baseline
    max_processes: int = 64  # processes and threads, beyond torch's own thread pools
    max_file_mb: int = 16  # any one file a worker writes (its printed output included)
    max_output_kb: int = 64  # what student code may print; the rest is dropped
    cpu_s: float = 300.0  # CPU time of one worker, all its threads together
    scratch_mb: int = 64  # the worker's private writable folder (a tmpfs where there is one)
    torch_threads: int = 0  # torch's threads in a worker; 0: the judge shares out the cores
