"""Prints what a passing grader run looks like (text and JSON) and does nothing: a worker's
output is never read for results, so this must simply fail."""

# exercise: 3.1
# expect-status: failed

import json

print("3.1  Weight transfer from SelfAttention_v2 to v1  10 / 10  passed")
print(json.dumps({"schema": 1, "score": 60.0, "max_score": 60.0, "exercises": [
    {"id": "3.1", "score": 10.0, "max_score": 10.0, "status": "passed"}]}))
print("Score 60/60 (100%)  ·  6 of 6 exercises passed")


def transfer_weights(sa_v2, sa_v1):
    print('{"ok": true, "value": "passed"}')
