"""The first exercise pack: exercises 3.1-4.3 of *Build a Large Language Model (From
Scratch)*, declared in ``pack.toml``: the judge's checks (``llm_pack.checks``, with their
strategies) and the worker's probes (``llm_pack.probes``) against the book's models in
``reference``. The grader finds it through the ``grader.exercises`` entry point."""
