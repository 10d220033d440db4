"""Writing and proving exercise packs, for the people who write them (not for students).

- ``corpus``: a pack's corpus of wrong and unusual right answers, and what each must get;
- ``mutants`` and ``mutops``: the mutator, small student-like changes to a solution;
- ``mutation``: grading mutants through ``grader.pipeline`` (``bench/mutate.py`` runs it too);
- ``proof``: ``grade check-pack``'s steps (solution, stubs, corpus, mutants);
- ``scaffold`` and ``templates``: the files ``grade new-exercise`` writes.

Everything here grades through ``grader.pipeline``, as every front end does.
"""
