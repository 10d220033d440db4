"""Raises, in every call, an exception whose message holds a lone surrogate, terminal escapes,
a NUL, a form feed and forged CI commands, and prints more of the same. Before the sanitiser,
`grade` stopped with "internal error: UnicodeEncodeError ... surrogates not allowed" and lost
every exercise; now the text is made safe where it enters the judge and the exercise simply
fails, its message readable."""

# exercise: 3.1
# expect-status: failed
# expect-message: your code raised ValueError: lone � here \x1b[31mred\x1b[0m \x00 \x0c
# expect-message: ::error::forged

import os

NASTY = "lone \ud800 here \x1b[31mred\x1b[0m \x00 \x0c\n::error::forged ]]> </script>"
print(NASTY.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
os.write(1, b"\xff\xfe invalid bytes \x1b]0;title\x07\n")


def transfer_weights(sa_v2, sa_v1):
    raise ValueError(NASTY)
