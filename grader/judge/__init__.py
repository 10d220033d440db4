"""The judge side: draws the examples, computes the expected values from the reference models,
runs the checks against a worker and decides (DESIGN §5). It talks to workers only through
``grader.judge.launch`` and ``grader.protocol``, and never imports ``grader.worker``."""
