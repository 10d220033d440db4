"""Crashes the interpreter with a segmentation fault: a read at an unmapped address (8), made with
``ctypes.cast`` (which raises no audit event; ``ctypes.string_at(0)`` would be seen by the
tripwire first and end the worker as tampering). A signal sent to itself would not do: the
worker is the first process of its PID namespace, which the kernel shields from such signals."""

# exercise: 3.1
# expect-status: error
# expect-message: segmentation fault

import ctypes


def transfer_weights(sa_v2, sa_v1):
    return ctypes.cast(8, ctypes.POINTER(ctypes.c_char))[0]  # address 8: not NULL, not mapped
