"""Training: the corpus and its split rules (``data``), the recipes (``recipes.toml``), the
one training loop with its loss, schedules, batch plans and resumable state (``trainer``),
the command that builds either path's data and calls it (``train``: the grammar task; with
``pairs``: any TSV and the recipes) and the evaluation (``evaluate``). Commands:
``python -m model.training.data``, ``python -m model.training.train``,
``python -m model.training.evaluate``."""
