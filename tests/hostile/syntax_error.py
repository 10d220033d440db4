"""Does not parse."""

# exercise: 4.1
# expect-status: error
# expect-message: does not parse


def feedforward_params(cfg)
    return 0
