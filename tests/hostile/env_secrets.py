"""Collects every secret it can find (its environment, the environment of every process it
can see, the grader's in particular, credential files) and puts them in its error message,
which the grader shows in the report."""

# exercise: 4.2
# expect-status: error
# needs: pid|landlock

import os
from pathlib import Path

found = [f"{k}={v}" for k, v in os.environ.items()]
for entry in Path("/proc").iterdir():
    try:
        found.append(entry.joinpath("environ").read_bytes().decode(errors="replace"))
    except OSError:
        pass
for name in ("~/.aws/credentials", "~/.ssh/id_rsa", "~/.netrc", "~/.config/gh/hosts.yml",
             "/proc/@JUDGE_PID@/environ"):
    try:
        found.append(Path(os.path.expanduser(name)).read_text(errors="replace"))
    except OSError:
        pass
raise RuntimeError("secrets: " + " | ".join(found))
