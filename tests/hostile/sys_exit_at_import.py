"""Calls sys.exit while being imported (SystemExit is not an Exception)."""

# exercise: 4.2
# expect-status: error
# expect-message: SystemExit

import sys

sys.exit("nothing to see here")
