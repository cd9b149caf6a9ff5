"""The training recipes (``recipes.toml`` beside this file): the settings that reproduce each
shipped model, read by the trainer (``pairs.parse_args``) and written into a model's card by the
evaluation (``evaluate``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

RECIPES_FILE = Path(__file__).with_name("recipes.toml")
RECIPES: dict[str, dict] = tomllib.loads(RECIPES_FILE.read_text(encoding="utf-8"))


def recipe_card(name: str) -> dict:
    """The card fields of recipe ``name`` (description, grammar, examples): its own
    ``[NAME.card]``, or those of the recipe its ``card_of`` names (a second stage shows the
    first stage's examples); ``{}`` for a name that is no recipe."""
    recipe = RECIPES.get(name, {})
    return RECIPES.get(recipe.get("card_of", name), {}).get("card", {})
