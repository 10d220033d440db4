#!/usr/bin/env bash
# A new user's first hour, replayed: a fresh clone, the README's commands as written, the
# mistakes a first try makes. Prints a markdown transcript (docs/first-hour.md holds one run).
# Usage: docs/first-hour.sh REPO_URL_OR_PATH > transcript.md
set -uo pipefail
SRC=${1:?repository to clone}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT  # the clone and its venv (torch included)
cd "$WORK"
show() {  # show "what the user types" [lines to keep]
  local cmd=$1 keep=${2:-40}
  printf '\n```console\n$ %s\n' "$cmd"
  bash -c "$cmd" 2>&1 | grep -v '^WARNING: Location' | sed -e "s#$WORK#/home/me#g" | head -n "$keep"
  printf '```\n'
}
echo "# A first hour with the exercise pack, from the README alone"
echo
echo "Replayed by \`docs/first-hour.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores); only the README was read."
echo
echo "## Clone and install (Quick start, line 1)"
git clone -q "$SRC" clone 2>&1
cd clone
show 'python3 -m venv .venv && . .venv/bin/activate && pip install -q -c constraints.txt -e ".[dev]" && grade examples/submission --html report.html --json result.json; echo "grade exit status: $? (1 = some checks failed, as in this example)"' 60
echo
echo "The venv stays activated in that shell; in a new one, \`. .venv/bin/activate\` again (or \`python -m grader\`):"
show '. .venv/bin/activate && which grade && python -m grader --help | head -3'
echo
echo "## The untouched stubs"
show '. .venv/bin/activate && grade'
show '. .venv/bin/activate && grade -v | wc -l'
echo
echo "## A first try at 3.1: assigning a plain tensor to a parameter"
cat > exercises/ex3_1_weight_transfer.py <<'PY'
def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = sa_v2.W_query.weight.T
    sa_v1.W_key = sa_v2.W_key.weight.T
    sa_v1.W_value = sa_v2.W_value.weight.T
PY
show '. .venv/bin/activate && grade -e 3.1' 60
echo
echo "## A second try: copying without transposing; the report's snippet, pasted as it says"
cat > exercises/ex3_1_weight_transfer.py <<'PY'
import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)
PY
show '. .venv/bin/activate && grade -e 3.1' 60
. .venv/bin/activate
grade -e 3.1 --json r.json >/dev/null
python - <<'PY' > snippet.py
import json
print(json.load(open("r.json"))["exercises"][0]["checks"][0]["reproduce"])
PY
rm r.json
show '. .venv/bin/activate && python snippet.py' 12
rm snippet.py
echo
echo "## A 4.1 answer that counts the causal mask too"
cat > exercises/ex4_1_parameter_counts.py <<'PY'
def feedforward_params(cfg):
    e = cfg["emb_dim"]
    return 2 * (e * 4 * e) + 4 * e + e


def attention_params(cfg):
    e, n = cfg["emb_dim"], cfg["context_length"]
    qkv = 3 * e * e + (3 * e if cfg["qkv_bias"] else 0)
    return qkv + e * e + e + n * n
PY
show '. .venv/bin/activate && grade -e 4.1' 40
echo
echo "## An exercise file that is a symbolic link"
cp exercises/ex4_1_parameter_counts.py ../counts.py && ln -sf ../../counts.py exercises/ex4_1_parameter_counts.py
show '. .venv/bin/activate && grade -e 4.1' 12
rm exercises/ex4_1_parameter_counts.py && git checkout -q exercises/ex4_1_parameter_counts.py
echo
echo "## A count that is far too large"
sed -i 's/^def total_params(cfg.*/&\n    return 10**400/' exercises/ex4_2_scaled_configs.py
show '. .venv/bin/activate && grade -e 4.2 2>&1 | grep -m2 -i "digits\|not done"' 6
git checkout -q exercises/ex4_2_scaled_configs.py
echo
echo "## What git sees after all this"
show 'git status --short'
echo
echo "## The tests, and the quick subset (the edited exercise put back first: the tests read the stubs)"
git checkout -q exercises
show '. .venv/bin/activate && time python -m pytest -q -m "not slow" 2>&1 | tail -2' 8
