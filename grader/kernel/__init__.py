"""``grader.check`` in a notebook's kernel: the client the kernel imports (``nbcheck``, nothing
heavy) and the judge process it starts and talks to over pipes (``nbjudge``)."""
