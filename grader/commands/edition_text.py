"""The text of the files ``grade release`` writes for students: the README, the GitHub Actions
workflow that grades every push, and the ``.gitignore``. ``README`` and ``WORKFLOW`` are
``str.format`` templates (``{table}``, ``{cpu_index}``; literal braces doubled)."""

from __future__ import annotations

README = """\
# Chapters 3 and 4: attention and the GPT model

Six exercises from chapters 3 and 4 of *Build a Large Language Model (From Scratch)*, with
the grader that checks them. You edit only the files in `exercises/`; `grade` tells you which
checks pass, and for each one that fails, a small input that breaks your code, a snippet that
reproduces it and a hint.

| exercise | file | you write |
|---|---|---|
{table}

`reference/` holds the book's classes (`SelfAttention_v1`, `MultiHeadAttention`, `GPTModel`,
`GPT_CONFIG_124M`, ...): import them with `from reference import MultiHeadAttention`.

## Install (once)

You need Python 3.10 to 3.13.

```bash
python3 -m venv .venv
source .venv/bin/activate          # Windows: .venv\\Scripts\\activate
pip install -c constraints.txt -e .
```

`grade` is a command of that environment: in each new terminal, activate it again (the second
line) first, or run `python -m grader` instead of `grade`.

`constraints.txt` pins the PyTorch version the grader expects. On Linux without a GPU, add
`--extra-index-url {cpu_index}` to the `pip install` line: it
installs the small CPU build of PyTorch instead of one with several GB of CUDA libraries.

## Work on an exercise

Each file in `exercises/` starts with the exercise statement: the task, what is graded, and a
hint. Replace the `raise NotImplementedError(...)` with your answer; keep the names of the
functions, classes and variables the file defines, the grader calls them.

## Check your work

```bash
grade                      # all six exercises
grade -e 3.1               # one exercise (repeat -e for more)
grade -v                   # every failure in full
grade --html report.html   # the same report as a web page
grade my_answers.ipynb     # a notebook (see below)
grade --watch              # grade, then again each time you save a file (Ctrl-C to stop)
```

`grade` never changes your files. It runs your code in separate, time- and memory-limited
processes, so an infinite loop or a crash in one exercise costs only that exercise. It gives the
same score on every run; `grade --seed N` tries other examples.

Your grade may come from examples you have not seen: the course can grade with a seed of its
own (in GitHub Actions, on Gradescope, or when your instructor grades the class), and reports
graded that way say "course seed". An answer that is right for any input passes with both
seeds; one that is tuned to the examples `grade` shows you does not.

The exit status is 0 when every check passes and 1 when some check fails (2 means `grade`
could not read what you gave it).

`pytest` runs the same checks as tests, one test per check (install it with
`pip install -c constraints.txt -e ".[test]"`): the pass/fail of each test is the grader's.

## Read the report

```
  3.1  Weight transfer from SelfAttention_v2 to v1    5.0/10    failed
  ...
3.1 Weight transfer from SelfAttention_v2 to v1
  x sa_v1 computes what sa_v2 computes, for any d_in, d_out and input  (0/5)
      sa_v1(x) after the transfer (expected: sa_v2(x)) differs from the expected values ...
      Expected: tensor([[ 0.0771, -0.1665]])
      Got:      tensor([[-0.1445,  0.0016]])
      Counterexample: {{'d_in': 2, 'd_out': 2, 'n_tokens': 1, 'seed': 0}}
      Hint: nn.Linear(d_in, d_out) stores its weight with shape (d_out, d_in) ...
      Reproduce (paste into Python in your clone):
        import torch
        ...
Score: 5/10  (0 of 1 exercises passed, 1.3 s)
```

- One line per exercise: its score and its status. `passed`: every check passed. `failed`:
  some check failed (a stub that is not done yet is `failed`, with the message "not done yet").
  `error`: your file could not be imported (the message says where). `timeout`: your code
  took too long. `missing`: the file was not found.
- Under each exercise that lost points, each failed check (`x`), with points earned and
  possible, and what went wrong in plain words.
- **Counterexample**: the smallest input the grader found that breaks your code. The
  grader tries many sizes and seeds, not only the book's example, and then shrinks the
  failing case.
- **Reproduce**: a snippet to paste into `python` at the root of this repository: it builds
  that input and prints what your code computes next to what was expected.
- **Hint**: where to look.

## Notebooks

If you prefer a notebook, `grade NOTEBOOK.ipynb` grades it without running it: it takes, for
each exercise, the cell tagged `exercise-3.1` ... `exercise-4.3`, or, in an untagged notebook,
the definitions with the exercise's names (`transfer_weights`, `GPTModel`, ...) and what they
need (imports, your own classes). Demo code, prints, `!` and `%` lines are left out; the report
says which cells were used. Save the notebook before grading it. Inside the notebook,
`import grader; grader.check("3.1")` grades an exercise from the cells you have run (no save
needed) and shows the result under the cell; `grader.check_all()` grades all six.

## Hand in

Commit and push. The workflow in `.github/workflows/classroom.yml` installs this repository
and runs `grade` on every push: the Actions tab shows the score table, each failed check is
annotated on its exercise file, and the HTML report is attached to the run.
"""

WORKFLOW = """\
# Grades the exercises on every push: the score table goes to the run's summary, each failed
# check becomes an annotation on its file, and the HTML report is kept as an artifact.
name: Grade

on:
  push:
  pull_request:
  workflow_dispatch:

permissions:
  contents: read

jobs:
  grade:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
          cache-dependency-path: |
            pyproject.toml
            constraints.txt
      - name: Install
        # The CPU build of PyTorch: the pinned version without the CUDA libraries.
        run: pip install --extra-index-url {cpu_index} -c constraints.txt -e .
      - name: Grade
        env:
          # The course's grading seed, from a repository or organization secret named
          # GRADE_SEED: the examples are then ones no student has seen, and no output of this
          # job shows the number ("course seed"). Without the secret: the public seed.
          GRADE_SEED: ${{{{ secrets.GRADE_SEED }}}}
        run: grade --format github --html grade-report.html
      - name: Keep the HTML report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: grade-report
          path: grade-report.html
          if-no-files-found: ignore
"""

GITIGNORE = """\
.venv/
__pycache__/
*.egg-info/
.hypothesis/
.pytest_cache/
.ipynb_checkpoints/
# What grade writes when asked (--html, --json, the CI formats redirected to a file)
grade-report.html
report.html
result.json
results.json
report.xml
"""
