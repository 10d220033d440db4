"""``grade batch``: grading a whole class of submissions in parallel, resumably.

One module per job: ``config`` (grading.toml), ``entries`` (what is in DIR, content hashes,
shards), ``extract`` (safe unzipping), ``intake`` (an entry turned into a ``Submission``),
``boot`` (setting up one judge process), ``pool`` (the judge processes and their jobs),
``ledger`` (OUT's files and the SQLite database), ``gradebook`` (the CSV), ``dashboard``
(index.html) and ``progress`` (the progress bar or plain lines).
"""
