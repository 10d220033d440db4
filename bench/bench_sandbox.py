"""Benchmark: starting sandboxed workers, and the memory of a grading.

Prints
- which sandbox layers are on here;
- for reference, the cost of a bare ``fork`` of a torch-loaded process and of entering new
  user, network, mount, PID and IPC namespaces (``unshare``);
- the time to start one isolated worker from the fork server, namespaces included: until the
  judge holds its handle, and until the worker has set up its sandbox, imported a student file
  and answered (target: under 30 ms); and the time to start six at once, as ``grade`` does;
- the peak memory of the whole process tree (judge, fork server, spares, workers) while
  ``grade`` grades an answer to 4.2 that instantiates GPT-2 XL for real (target: under
  1.5 GiB), as the sum of RSS and of PSS (PSS shares the pages of forked processes fairly).

    python bench/bench_sandbox.py [--runs N]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import tree_pids  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
XL_ANSWER = ROOT / "tests/corpus/ex4_2/correct_instantiates_with_element_size.py"
SOLUTION = ROOT / "tests/submissions/solution"


def ms(values: list[float]) -> str:
    return (
        f"median {1000 * statistics.median(values):6.1f} ms  "
        f"[min {1000 * min(values):.1f}, max {1000 * max(values):.1f}]"
    )


def bare_costs(runs: int) -> tuple[list[float], list[float]]:
    import torch  # noqa: F401

    from grader.worker.sandbox import linux

    forks, unshares = [], []
    flags = (
        linux.CLONE_NEWUSER
        | linux.CLONE_NEWNET
        | linux.CLONE_NEWNS
        | linux.CLONE_NEWPID
        | linux.CLONE_NEWIPC
    )
    for _ in range(runs):
        r, w = os.pipe()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            t = time.perf_counter()
            ok = ctypes.CDLL(None).unshare(flags) == 0
            os.write(w, repr((t - start, time.perf_counter() - t, ok)).encode())
            os._exit(0)
        os.close(w)
        fork_s, unshare_s, ok = eval(os.read(r, 200))
        os.close(r)
        os.waitpid(pid, 0)
        forks.append(fork_s)
        if ok:
            unshares.append(unshare_s)
    return forks, unshares


def start_costs(runs: int) -> tuple[list[float], list[float], list[float]]:
    from grader.judge.launch.forkserver import ForkServer
    from grader.judge.launch.starter import SandboxStarter, describe_off, off_layers
    from grader.protocol.limits import Limits

    server = ForkServer().start()
    starter = SandboxStarter(server)
    layers = starter.layers()
    print("layers on:  " + ", ".join(k for k, v in sorted(layers.items()) if v["on"]))
    print("layers off: " + (describe_off(off_layers(layers)) or "none"))
    server.wait_ready()
    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    student = work / "sub" / "exercises" / "ex3_1_weight_transfer.py"
    student.parent.mkdir(parents=True)
    student.write_text("def transfer_weights(sa_v2, sa_v1):\n    pass\n")
    limits = Limits()
    handles, readies, sixes = [], [], []
    try:
        for _ in range(runs):
            time.sleep(0.3)  # let the server make its spares again
            t0 = time.perf_counter()
            worker = starter("3.1", student, student.parents[1], limits, work)
            t1 = time.perf_counter()
            worker.receive(60)
            t2 = time.perf_counter()
            worker.close()
            handles.append(t1 - t0)
            readies.append(t2 - t0)
        for _ in range(max(2, runs // 5)):
            time.sleep(1.0)
            t0 = time.perf_counter()
            batch = [starter("3.1", student, student.parents[1], limits, work) for _ in range(6)]
            for worker in batch:
                worker.receive(60)
            sixes.append(time.perf_counter() - t0)
            for worker in batch:
                worker.close()
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    return handles, readies, sixes


def memory_of(pids: list[int]) -> tuple[int, int]:
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:
            pass
    return rss, pss


def peak_memory() -> tuple[int, int, float, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from support import make_submission

    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    try:
        sub = make_submission(work / "sub", {"4.2": XL_ANSWER})
        start = time.perf_counter()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.commands.cli",
                str(sub),
                "-e",
                "4.2",
                "--format",
                "json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        peaks = [0, 0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                rss, pss = memory_of(tree_pids(process.pid))
                peaks[0], peaks[1] = max(peaks[0], rss), max(peaks[1], pss)
                time.sleep(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        out, _ = process.communicate()
        done.set()
        sampler.join()
        import json

        result = json.loads(out)
        verdict = f"{result['score']:g}/{result['max_score']:g}"
        return peaks[0], peaks[1], time.perf_counter() - start, verdict
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    handles, readies, sixes = start_costs(args.runs)
    forks, unshares = bare_costs(args.runs)
    print(f"bare fork of a torch-loaded process      {ms(forks)}")
    if unshares:
        print(f"unshare user+net+mount+pid+ipc          {ms(unshares)}")
    print(f"isolated worker, handle to the judge     {ms(handles)}")
    print(f"isolated worker, answering (target <30)  {ms(readies)}")
    print(f"six isolated workers, all answering      {ms(sixes)}")
    rss, pss, took, verdict = peak_memory()
    gib = 2**30
    print(f"grading 4.2 with GPT-2 XL built for real: {verdict} in {took:.1f} s")
    print(
        f"  peak memory of the process tree: PSS {pss / gib:.2f} GiB, RSS {rss / gib:.2f} GiB"
        f"  (target < 1.5 GiB)"
    )


if __name__ == "__main__":
    main()
