"""Greedy translation with a decoder-only prefix language model, for validation while it
trains (``core.prefix_lm``'s layout; Liu et al. 2018, section 4.2): the prompt ``<s>
English <sep>`` once, then one token per step through the key/value cache until ``</s>``.
The app's decoding (beams, sampling, traces) is the backend's, not this.

Shape letters: P prompt tokens, N_all = P + the tokens written so far, V vocabulary size.
"""

from __future__ import annotations

import torch

from ..core.decoder_only import DecoderOnlyTransformer
from ..core.prefix_lm import PrefixCodec


@torch.inference_mode()
def greedy_continuation(model: DecoderOnlyTransformer, prompt: list[int], max_new_tokens: int
                        ) -> list[int]:
    """The most probable token at each step after ``prompt`` (P,) ids, ``</s>`` included
    when the model writes it, at most ``max_new_tokens`` and never past ``max_len``
    positions. Each step feeds one token with ``past_key_values`` (equal to a full pass).

    Raises:
        ValueError: an empty prompt, or one of ``max_len`` positions or more.
    """
    if not prompt or len(prompt) >= model.config.max_len:
        raise ValueError(f"the prompt must have 1 to {model.config.max_len - 1} tokens, "
                         f"got {len(prompt)}")
    model.eval()
    out = model(torch.tensor([prompt]))  # logits (1, P, V)
    written: list[int] = []
    room = min(max_new_tokens, model.config.max_len - len(prompt))
    for step in range(room):
        if step:
            out = model(torch.tensor([written[-1:]]), past_key_values=out.past_key_values)
        written.append(int(out.logits[0, -1].argmax()))  # logits (1, 1, V) after the first
        if written[-1] == model.config.eos_id:
            break
    return written


def translate(model: DecoderOnlyTransformer, codec: PrefixCodec, english: str, *,
              max_new_tokens: int = 80) -> str:
    """Greedy Chinese for ``english``: ``codec.prompt``, ``greedy_continuation``, then
    ``codec.decode``.

    Raises:
        ValueError: the prompt does not fit ``max_len`` (``greedy_continuation``).
    """
    return codec.decode([codec.layout.sep_id,
                         *greedy_continuation(model, codec.prompt(english), max_new_tokens)])
