"""Loops forever while being imported: the import time limit must stop it."""

# exercise: 4.1
# expect-status: timeout
# expect-message: did not finish

while True:
    pass
