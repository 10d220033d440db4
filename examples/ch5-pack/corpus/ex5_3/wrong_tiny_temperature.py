"""Takes a very small temperature for the second way: sampling is then very peaked, but a model
whose two best tokens are nearly tied still gets different tokens for different seeds."""
# expect-failing: every setting in deterministic_settings() makes generate greedy
# expect-failing: shows both ways
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [{"temperature": 0.0}, {"temperature": 1e-4}]


def is_deterministic(temperature, top_k):
    return temperature < 0.01
