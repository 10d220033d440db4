"""Right settings, but the predicate asks for both conditions at once: temperature 0.0 alone
(or top_k=1 alone) already makes generate deterministic."""
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [{"temperature": 0.0}, {"temperature": 0.8, "top_k": 1}]


def is_deterministic(temperature, top_k):
    return temperature == 0.0 and top_k == 1
