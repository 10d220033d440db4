"""A worked example of a course's own exercise pack: chapter 5 of *Build a Large Language Model
(From Scratch)*, text generation with temperature and top-k sampling (exercises 5.1, 5.2 and 5.3).

The pack is this folder: ``pack.toml`` declares the exercises; ``reference`` holds what both
sides and students use (small models that need no download, chapter 4's greedy decoding);
``oracle`` (the book's ``generate``), ``checks/`` and ``strategies`` are the judge's side, which
no answer may import, ``probes`` the worker's; ``stubs/``, ``solution/`` and ``corpus/`` are
what students get, the instructor's answer, and the answers that prove the checks (wrong ones
with the checks they must fail, unusual right ones).
"""
