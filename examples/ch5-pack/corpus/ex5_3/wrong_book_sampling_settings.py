"""Returns the book's sampling example (temperature 1.4, top_k 25) as if it were deterministic,
and says every setting is: the settings the book uses to make the text varied."""
# expect-failing: every setting in deterministic_settings() makes generate greedy
# expect-failing: shows both ways
# expect-failing: is_deterministic(temperature, top_k) is True exactly


def deterministic_settings():
    return [{"temperature": 1.4, "top_k": 25}]


def is_deterministic(temperature, top_k):
    return True
