"""The exceptions the public API documents."""


class InputError(ValueError):
    """A sentence the model cannot take (empty, too long); the message is for the user."""


class CheckpointError(ValueError):
    """A pretrained folder that cannot be loaded; the message names the file and the problem."""


def short_repr(value, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, so error messages stay short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
