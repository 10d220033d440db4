"""The benchmarks' baseline (bench/measure.py): a ratio to ``import torch`` is only a figure
when the import ran, so an interpreter without torch stops the benchmark with one line."""

import importlib.util
import shutil
import sys

import pytest
from support import ROOT


def _measure():
    name = "bench_measure"
    if name not in sys.modules:  # its dataclasses look their module up there
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "measure.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def test_an_interpreter_without_torch_stops_the_benchmark():
    measure = _measure()
    with pytest.raises(SystemExit, match="cannot import torch"):
        measure.torch_seconds(shutil.which("false") or "/bin/false")
