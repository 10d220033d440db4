"""Sends UDP datagrams (Landlock does not cover UDP: only a network namespace stops it) to the
test's own receiver on 127.0.0.1. Gives a correct answer whatever happens; the test checks
that nothing arrived."""

# exercise: 4.1
# expect-status: passed
# needs: net

import socket

from reference import TransformerBlock

try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(3):
            s.sendto(b"@MARKER@", ("127.0.0.1", int("@UDP_PORT@")))
except OSError:
    pass


def _count(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def feedforward_params(cfg):
    return _count(TransformerBlock(cfg).ff)


def attention_params(cfg):
    return _count(TransformerBlock(cfg).att)
