"""Notebooks for the notebook, release, Gradescope and pytest-plugin tests, built with nbformat:
the instructor solution as a tagged or untagged notebook, and a notebook in the style of the
seed notebooks (the book's classes copied in, demo prints, ``!pip`` and ``%`` lines, classes
defined twice)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat import v4
from support import SOLUTION

from grader.shared.registry import EXERCISES

Cell = tuple[str, str] | tuple[str, str, list[str]]  # (kind, source[, tags])


def write_notebook(path: Path, cells: list[Cell]) -> Path:
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for n, spec in enumerate(cells, start=1):
        kind, source = spec[0], spec[1]
        tags = spec[2] if len(spec) > 2 else []
        if kind == "markdown":
            cell = v4.new_markdown_cell(source)
        else:
            cell = v4.new_code_cell(source, execution_count=n)
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    nbformat.validate(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def solution_source(exercise_id: str) -> str:
    ex = next(e for e in EXERCISES if e.id == exercise_id)
    return (SOLUTION / "exercises" / ex.filename).read_text(encoding="utf-8")


def solution_notebook(path: Path, tagged: bool) -> Path:
    """The instructor solution, one exercise per cell, between install lines, magics and
    demo cells a student would have."""
    cells: list[Cell] = [
        ("markdown", "# Chapters 3 and 4: my answers"),
        (
            "code",
            "!pip install -q torch\n%matplotlib inline\nimport torch\nprint(torch.__version__)",
        ),
    ]
    for ex in EXERCISES:
        cells.append(("markdown", f"## Exercise {ex.id}"))
        tags = [f"exercise-{ex.id}"] if tagged else []
        cells.append(("code", solution_source(ex.id), tags))
    cells += [
        ("code", "%%time\nsa = make_2d_wrapper(3, 6)\nprint(sa(torch.rand(2, 6, 3)).shape)"),
        (
            "code",
            "for name, cfg in GPT2_CONFIGS.items():\n"
            "    print(name, f'{total_params(cfg):,}', f'{model_size_mb(cfg):.1f} MB')",
        ),
        (
            "code",
            "model = GPTModel(GPT_CONFIG_SPLIT_DROPOUT)\nmodel.eval()\n"
            "print(model(torch.tensor([[1, 2, 3]])).shape)",
        ),
        ("code", "%timeit feedforward_params(GPT2_CONFIGS['small'])\n!nvidia-smi"),
    ]
    return write_notebook(path, cells)


# --- a notebook as the seed students wrote it ----------------------------------------------

SEED_STYLE = Path(__file__).parent / "notebooks" / "seed_style.txt"


def read_percent(path: Path) -> list[Cell]:
    """Cells from a file in the "percent" format (``# %%`` and ``# %% [markdown]`` markers)."""
    cells: list[Cell] = []
    kind, lines = None, []
    for line in path.read_text(encoding="utf-8").splitlines() + ["# %%"]:
        if line == "# %%" or line == "# %% [markdown]":
            if kind is not None:
                cells.append((kind, "\n".join(lines).strip("\n")))
            kind, lines = ("markdown" if "markdown" in line else "code"), []
        else:
            lines.append(line)
    return cells


def seed_style_notebook(path: Path) -> Path:
    """The seed-style notebook (see tests/notebooks/seed_style.txt): all six answers right."""
    return write_notebook(path, read_percent(SEED_STYLE))
