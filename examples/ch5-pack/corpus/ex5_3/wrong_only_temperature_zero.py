"""Knows only one way: temperature 0.0. top_k=1 with a temperature above 0 is deterministic
too (a single token survives the filter), and is_deterministic says it is not."""
# expect-failing: shows both ways
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [{"temperature": 0.0}]


def is_deterministic(temperature, top_k):
    return temperature == 0.0
