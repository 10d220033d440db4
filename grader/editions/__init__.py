"""What the course hands out, built from the packs in use: the student edition (``release``),
the student notebook (``notebook``) and the Gradescope autograder bundle (``gradescope``), with
their words (``text``) and the files they write from ``templates/``. The commands of the same
names parse their arguments, call these and print."""
