"""Exercise 5.3 — Deterministic behaviour of ``generate``.

The book's exercise 5.3: which combinations of settings of ``generate`` (exercise 5.1) make it
deterministic, that is, make it always return the same text for the same prompt, as the
greedy ``generate_text_simple`` of chapter 4 does?

Your task, in two parts:
- ``deterministic_settings()`` returns a list of keyword settings for ``generate`` (dicts with
  the keys ``"temperature"`` (a number >= 0) and/or ``"top_k"`` (``None`` or an int >= 1); a
  key left out takes ``generate``'s default, ``temperature=0.0``, ``top_k=None``) each of which
  makes it deterministic. Show every way the book names, each with at least one setting; a
  ``top_k`` larger than a model's vocabulary keeps every token.
- ``is_deterministic(temperature, top_k)`` returns ``True`` when ``generate`` with these
  settings is deterministic and ``False`` when its output can depend on the random seed, for
  any ``temperature >= 0`` and ``top_k`` (``None`` or an int >= 1).

What is graded:
- every setting you return, plugged into the book's ``generate`` (to try it in your own
  Python: ``from llm_ch5_pack.oracle import generate``; no answer may import it: the grader
  refuses it), gives the greedy continuation for any model, prompt and torch seed (the
  grader runs it under two seeds on tiny GPT models and on models whose two best tokens have
  nearly equal logits);
- your settings show both ways the book names (one setting per way at least);
- ``is_deterministic`` is right for every temperature and top_k the grader tries (0.0, tiny
  and large temperatures; top_k None, 1 and larger).

Hint: read ``generate`` line by line. When does it call ``torch.multinomial``, and when it
does, how many tokens have a probability above zero? A very small temperature makes sampling
very peaked, but is it deterministic for every model?
"""


def deterministic_settings() -> list[dict]:
    """Keyword settings of ``generate`` that make it deterministic, every way the book names."""
    raise NotImplementedError(
        "Exercise 5.3 is not done yet: write deterministic_settings() in "
        "exercises/ex5_3_deterministic.py (settings such as {'temperature': ...})."
    )


def is_deterministic(temperature: float, top_k: int | None) -> bool:
    """Whether ``generate(..., temperature=temperature, top_k=top_k)`` is deterministic."""
    raise NotImplementedError(
        "Exercise 5.3 is not done yet: write is_deterministic() in "
        "exercises/ex5_3_deterministic.py."
    )
