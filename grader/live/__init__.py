"""Grading as a student works, with a judge kept between grades: ``grader.check`` in a
notebook's kernel (``nbcheck``, the client, nothing heavy; ``nbjudge``, the judge process it
starts and talks to over pipes) and the saves ``grade --watch`` regrades on (``saves``)."""
