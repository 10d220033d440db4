"""The judge side of the pack: one module per exercise (``ex3_1`` ... ``ex4_3``), each
exporting ``CHECKS``: its graded behaviours as hypothesis properties with points, hints and
reproduce snippets."""
