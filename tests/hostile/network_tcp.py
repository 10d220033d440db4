"""Tries to reach the network over TCP: the test's own listener on 127.0.0.1, and the world.
It gives a correct answer only if every connection failed."""

# exercise: 3.1
# expect-status: passed
# needs: net|landlock

import socket

import torch

LEAKS = []
for host, port in (("127.0.0.1", int("@TCP_PORT@")), ("1.1.1.1", 53), ("8.8.8.8", 443)):
    try:
        with socket.create_connection((host, port), timeout=3) as s:
            s.sendall(b"@MARKER@")
            LEAKS.append(host)
    except OSError:
        pass


def transfer_weights(sa_v2, sa_v1):
    if LEAKS:
        raise RuntimeError(f"reached the network: {LEAKS}")
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
