"""``grade batch``: grading a whole class of submissions in parallel, resumably.

One module per job: ``config`` (grading.toml), ``course_seed`` (the seed a batch grades with),
``entries`` (what is in DIR, content hashes, shards, and each entry taken in through
``grader.pipeline``), ``judges`` (starting the judge processes and setting each one up),
``pool`` (the judge processes and their jobs), ``deadline`` (a judge's progress, and the row
of one killed at its deadline), ``ledger`` (OUT's files and the SQLite database) and
``progress`` (the progress bar or plain lines).

What is done with a graded class lives beside it: the class-level analyses (alike answers,
failure groups, the public-seed comparison) in ``grader.analysis``, the gradebook CSV and the
dashboard in ``grader.classview``.
"""
