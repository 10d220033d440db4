"""The public face of the grader for pack authors, as ``pytest`` stands over ``_pytest``.

A pack imports nothing of the grader but these two modules, one per side (DESIGN §5.7):

- ``grader.pack.judge``: what checks use (``Check``, ``CheckFailed``, the declarative
  ``same_as_reference``, comparisons, failure kinds and hints, ``seeded``, ``remembered``,
  the ``Worker`` protocol of the handle a check gets);
- ``grader.pack.worker``: what probes use (``plain``, ``number``, handing a module over with
  ``keep``/``forward``/``load_weights``, ``answer_probes``, ``seeded``).

The worker side never imports the judge's: this package's face imports neither, so that a
probe's ``from grader.pack.worker import ...`` brings no judge code into a worker. The
grader's internals may change under a pack; these names stay.
"""
