"""Several settings of each way, one of them the empty dict (generate's defaults: temperature
0.0), and the predicate written as the book's branch condition."""


def deterministic_settings():
    return [
        {},
        {"temperature": 0.0, "top_k": 3},
        {"top_k": 1, "temperature": 0.7},
        {"temperature": 2.0, "top_k": 1},
        {"temperature": 0.0, "top_k": 1},
    ]


def is_deterministic(temperature, top_k):
    samples = temperature > 0.0
    return not samples or top_k == 1
