"""Sub-commands of ``grade``: each module exposes ``main(argv) -> int`` (exit status)."""
