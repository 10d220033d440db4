"""Lifts its own memory limit if it can, then allocates until something gives."""

# exercise: 3.1
# expect-status: error
# expect-message: ran out of memory
# expect-message: Student code ran out of memory: it needed more than the 1024 MB

import resource


def transfer_weights(sa_v2, sa_v1):
    try:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        pass
    hoard = []
    while True:
        hoard.append(bytearray(256 * 2**20))
