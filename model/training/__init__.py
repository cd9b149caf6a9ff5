"""Training: the corpus and its split rules (``data``), the recipes (``recipes.toml``), the
trainers (``train``: the grammar task; ``train_pairs``: any TSV and the recipes) and the
evaluation (``evaluate``). Commands: ``python -m model.training.data``,
``python -m model.training.train``, ``python -m model.training.evaluate``."""
