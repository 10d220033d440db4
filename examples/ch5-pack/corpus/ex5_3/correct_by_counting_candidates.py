"""Reasons about how many tokens can be drawn: none is drawn at temperature 0 (argmax), else
as many as top_k lets through (all of them when top_k is None); one candidate is deterministic."""

import math

SETTINGS = ({"temperature": 0}, {"temperature": 1.5, "top_k": 1})


def deterministic_settings():
    return [dict(s) for s in SETTINGS]


def is_deterministic(temperature, top_k):
    if temperature <= 0:
        return True
    candidates = math.inf if top_k is None else top_k
    return candidates <= 1
