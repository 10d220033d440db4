"""The judge side of the chapter-5 pack: one module per exercise (``ex5_1``, ``ex5_3``), each
exporting ``CHECKS``: its graded behaviours as hypothesis properties with points, hints and
reproduce snippets; 5.1's checks themselves are in ``decoding`` and ``sampling``. The whole
package is judge-only (``pack.toml``'s ``judge``): no answer may import it."""
