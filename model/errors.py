"""The exceptions the public API documents."""


class InputError(ValueError):
    """A sentence the model cannot take (empty, too long); the message is for the user."""


class CheckpointError(ValueError):
    """A pretrained folder that cannot be loaded; the message names the file and the problem."""
