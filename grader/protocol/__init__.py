"""What the judge and the worker side agree on, and all they share: the channel's codec
(``wire``), the bounds put on a worker (``limits``) and how a worker-side process is started
(``boot``). Imports nothing of ``grader`` but ``grader.shared``."""
