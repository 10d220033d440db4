"""Small modules every part of the grader may import: the exercise registry, the errors several
layers raise, the text sanitiser and the stopwatch. They import nothing else of ``grader``."""
