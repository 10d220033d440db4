"""Expected values computed once per judge process (DESIGN §5.6).

The submissions of a batch are graded with the same seed, so the checks draw the same examples
for each of them, and hypothesis shrinks through the same examples again within one grade: what
the reference computes for an example (an oracle model, the input it gets, the logits it gives)
is then the same every time. ``remembered`` keeps it, keyed on the example itself.

Only pure functions of plain data are remembered: the result depends on the arguments alone
(a function that draws random numbers does it inside ``grader.shared.torchseed.seeded``), so
a remembered value is exactly the value computed again. Remembered values are shared, across
the threads of a judge too: callers read them and never change them in place.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

ENTRIES = 256  # per function; the values of one example are small (kilobytes to a few MB)
_FORGETS: list[Callable[[], None]] = []


def key_of(args: tuple, kwargs: dict) -> str:
    """The arguments' JSON form: equal examples give equal keys (tuples read as lists)."""
    return json.dumps([args, kwargs], sort_keys=True, separators=(",", ":"))


def remembered(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` computing each distinct call once per process (the last ``ENTRIES`` of them)."""
    values: OrderedDict[str, Any] = OrderedDict()
    lock = threading.Lock()  # threads of one judge share the values; fn runs outside the lock

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        key = key_of(args, kwargs)
        with lock:
            if key in values:
                values.move_to_end(key)
                return values[key]
        value = fn(*args, **kwargs)
        with lock:
            value = values.setdefault(key, value)  # a thread that computed it first wins
            if len(values) > ENTRIES:
                values.popitem(last=False)
        return value

    on_forget(values.clear)
    return wrapper


def on_forget(clear: Callable[[], None]) -> None:
    """Have ``forget_all`` call ``clear``: for other things a judge keeps across grades (the
    recorded examples of ``grader.judge.replay``)."""
    _FORGETS.append(clear)


def forget_all() -> None:
    """Drop every remembered value (and recorded example): the next grade in this process
    computes as a fresh one."""
    for forget in _FORGETS:
        forget()
