"""The training recipes (``recipes.toml`` beside this file): the settings that reproduce each
shipped model, read by the trainer (``pairs.parse_args``) and written into a model's card by the
evaluation (``evaluate``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

RECIPES_FILE = Path(__file__).with_name("recipes.toml")
RECIPES: dict[str, dict] = tomllib.loads(RECIPES_FILE.read_text(encoding="utf-8"))
