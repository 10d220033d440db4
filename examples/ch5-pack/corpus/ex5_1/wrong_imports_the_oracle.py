"""Takes the book's generate from the pack's oracle instead of writing it. The oracle is the
judge's alone (pack.toml's judge list): a worker refuses the import, so the answer gets 0 and
every check says "importing your file failed: imports the grader's checks: llm_ch5_pack.oracle
...". (A student may import it in their own Python to compare with; an answer may not.)"""
# expect-failing: with temperature 0.0 (any top_k) generate is greedy
# expect-failing: sampled tokens follow softmax
# expect-message: imports the grader's checks: llm_ch5_pack.oracle

from llm_ch5_pack.oracle import generate  # noqa: F401
