"""Small modules every part of the grader may import: the exercise registry, the errors several
layers raise, the text sanitiser, the stopwatch, heavy imports without the garbage collector and
the version. They import nothing else of ``grader``."""
