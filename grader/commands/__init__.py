"""The command line: ``cli`` (``grade``) and one module per subcommand (``batch``, ``merge``,
``release``, ``notebook``, ``gradescope``: each has ``main(argv) -> int``, the exit status), the
options they share, ``grade --watch``, the pytest plugin, ``grader.check`` in a notebook (the
kernel's client and its judge process) and ``load_exercise`` for reproduce snippets."""
