"""``seeded``: the judge's draws from torch's one CPU generator, kept apart across threads."""

from __future__ import annotations

import threading

import torch

from grader.shared.torchseed import seeded


def draws(seed: int, n: int = 4) -> list[float]:
    torch.manual_seed(seed)
    return torch.rand(n).tolist()


def test_seeded_gives_what_torch_manual_seed_gives():
    with seeded(7):
        got = torch.rand(4).tolist()
    assert got == draws(7)


def test_another_thread_cannot_reseed_or_draw_inside_a_seeded_block():
    """The race a batch of threads hit: one thread seeding between another's seeding and its
    draws gave that thread other weights, so a right answer was marked flaky."""
    entered, other = threading.Event(), []

    def intruder():
        entered.wait()
        with seeded(2):
            other.append(torch.rand(4).tolist())

    thread = threading.Thread(target=intruder)
    thread.start()
    with seeded(1):
        first = torch.rand(2).tolist()
        entered.set()
        thread.join(0.5)  # with no lock the intruder reseeds here, well within half a second
        second = torch.rand(2).tolist()
    thread.join()
    assert first + second == draws(1)
    assert other == [draws(2)]


def test_seeded_blocks_nest_in_one_thread():
    with seeded(1), seeded(3):
        inner = torch.rand(4).tolist()
    assert inner == draws(3)


def test_seeded_none_holds_the_generator_without_seeding_it():
    torch.manual_seed(5)
    with seeded(None):
        got = torch.rand(4).tolist()
    assert got == draws(5)
