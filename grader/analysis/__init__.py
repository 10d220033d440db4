"""What a class did, beyond each submission's score: the class-level analyses that ``grade
batch`` and ``grade merge`` run over a graded class (OUT's gradebook.sqlite).

``tokens`` (Python source as normalized tokens) under ``similarity`` (token fingerprints with
winnowing, which answers are alike), ``answers`` (each submission's answers kept in the
database), ``failures`` (each check's failures grouped by kind), ``insight`` (both rebuilt at
the end of a batch: the ``similarity`` and ``failure_groups`` tables and ``similarity.csv``)
and ``compare`` (``--compare-public``: the class graded with the public seed as well, to find
memorized answers). The class's renderers (``grader.classview``) read what they store.
"""
