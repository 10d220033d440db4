"""Believes that without a top_k the model falls back to greedy decoding: with top_k=None and a
temperature above 0, generate samples from the whole vocabulary."""
# expect-failing: every setting in deterministic_settings() makes generate greedy
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [{"temperature": 0.0}, {"temperature": 1.0, "top_k": 1}, {"temperature": 1.0}]


def is_deterministic(temperature, top_k):
    return temperature == 0.0 or top_k is None or top_k == 1
