"""Crashes the interpreter with a segmentation fault (reads address 0 through ctypes)."""

# exercise: 3.1
# expect-status: error
# expect-message: segmentation fault

import ctypes


def transfer_weights(sa_v2, sa_v1):
    ctypes.string_at(0)
