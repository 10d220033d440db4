"""Believes that a small top_k is enough: top_k=2 still samples between two tokens whenever the
temperature is above 0."""
# expect-failing: every setting in deterministic_settings() makes generate greedy
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [
        {"temperature": 0.0},
        {"temperature": 1.0, "top_k": 1},
        {"temperature": 1.0, "top_k": 2},
    ]


def is_deterministic(temperature, top_k):
    return temperature == 0.0 or (top_k is not None and top_k <= 2)
