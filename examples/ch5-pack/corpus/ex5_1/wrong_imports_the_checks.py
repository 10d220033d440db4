"""Takes generate from the grader's checks of 5.1 (``checks.decoding`` imports the book's
generate to compute the expected tokens). Every module of the checks is the judge's alone: a
worker refuses the import, so the answer gets 0 and every check says "importing your file
failed: imports the grader's checks: llm_ch5_pack.checks ..."."""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy
# expect-failing: sampled tokens follow softmax
# expect-message: imports the grader's checks: llm_ch5_pack.checks

from llm_ch5_pack.checks.decoding import generate  # noqa: F401
