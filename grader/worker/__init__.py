"""The worker side: everything that runs in the fork server and in the workers, where student
code runs. It never imports the judge side: only ``grader.protocol`` and ``grader.shared``."""
