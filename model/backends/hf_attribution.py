"""What attribution and value zeroing need of a Hugging Face model (``hf.HFSeq2Seq``), taken
through forward hooks on its own modules, as ``hf_hooks`` takes the heads' inputs.

- Gradients (``analysis.attribution``): the embeddings are the outputs of the model's own
  ``embed_tokens`` modules. f replaces those outputs with the embeddings it is given, so the
  model scales them (Marian, BART's ``embed_scale``), adds its positions and normalises as it
  does for ids, and the encoder and the decoder are run as two calls: a family whose two
  stacks share one embedding module (Marian, T5) is replaced in the right one.
- Value zeroing (``analysis.value_zeroing``): decoder layer l's value projection of the
  cross-attention (or of the self-attention) gives batch row j's token j a zero value vector
  in every head; the layers before l are untouched, so layer l's input is as it was and its
  output is compared with the unchanged pass. A causal language model (``hf_causal.HFCausal``)
  is zeroed the same way over its one sequence (GPT-2: the value third of the fused
  ``c_attn``), the layer called by itself on its recorded input.

Hooks act only on calls from the thread that set them and are removed before returning,
so the shared model keeps no state and other sessions' passes are never changed.

Shape letters: B batch, S source length, T decoder inputs, D d_model, L decoder layers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from .hf_hooks import recording
from .records import AttributionInputs


@contextmanager
def _hooked(module: torch.nn.Module, change):
    """During the block, ``module``'s output is ``change(output)`` for calls from this thread
    (unchanged where ``change`` returns None)."""
    me = threading.get_ident()

    def hook(_module, _args, output):
        return change(output) if threading.get_ident() == me else None

    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def _zero_own_token(output: torch.Tensor) -> torch.Tensor:
    """(B, K, H * Dh) values with row j's token j zeroed (B <= K)."""
    out = output.clone()
    rows = torch.arange(out.shape[0])
    out[rows, rows] = 0.0
    return out


@contextmanager
def _calls(modules: list[torch.nn.Module]):
    """During the block, record each module's last call from this thread, as (args, kwargs):
    yields the dict index -> call (a layer's hidden states, its masks and positions)."""
    me = threading.get_ident()
    seen: dict[int, tuple[tuple, dict]] = {}

    def keep(i: int):
        def hook(_module, args, kwargs):
            if threading.get_ident() == me:
                seen[i] = (args, kwargs)
        return hook

    handles = [m.register_forward_pre_hook(keep(i), with_kwargs=True)
               for i, m in enumerate(modules)]
    try:
        yield seen
    finally:
        for h in handles:
            h.remove()


def _zero_own_value(fused: int | None):
    """``_zero_own_token`` of a value projection's output, or with ``fused`` = D, of the
    value third (the last D features) of GPT-2's fused (B, K, 3 D) ``c_attn`` output."""
    if fused is None:
        return _zero_own_token

    def change(output: torch.Tensor) -> torch.Tensor:
        out = output.clone()
        rows = torch.arange(out.shape[0])
        out[rows, rows, 2 * fused:] = 0.0
        return out

    return change


def zeroed_one_stack_outputs(model, ids: torch.Tensor
                             ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """For each layer of a Hugging Face causal language model (``model``, an
    ``hf_causal.HFCausal``) over its one sequence ``ids`` (N,): the layer's output (N, D) in
    the unchanged pass, and (N, N, D) with position j's value vectors zeroed in every head
    of that layer in batch row j. The layer is called again by itself, on its recorded
    input (1, N, D) repeated N times with its recorded masks and positions (they broadcast
    over the batch), so the layers before it are untouched and not run again."""
    layers = model.blocks()
    N = len(ids)
    with torch.inference_mode():
        with recording(dict(enumerate(layers))) as seen, _calls(layers) as calls:
            model.hf(input_ids=ids[None], use_cache=False, logits_to_keep=1, return_dict=True)
        for i, layer in enumerate(layers):
            module, names = model.attention("decoder", i)
            fused = model.config.d_model if names == ("c_attn",) else None
            args, kwargs = calls[i]
            if args:  # the hidden states (1, N, D), first
                args = (args[0].expand(N, -1, -1), *args[1:])
            else:
                kwargs = {**kwargs, "hidden_states": kwargs["hidden_states"].expand(N, -1, -1)}
            with _hooked(getattr(module, names[0] if fused else names[2]),
                         _zero_own_value(fused)):
                out = layer(*args, **kwargs)
            yield seen[i][1][0], out[0] if isinstance(out, tuple) else out  # (N, D), (N, N, D)


def _decoder_layers(model) -> list[torch.nn.Module]:
    if model.model_type in ("t5", "mt5"):
        return list(model.hf.decoder.block)
    return list(model.hf.get_decoder().layers)


def _encoder_outputs(memory: torch.Tensor):
    from transformers.modeling_outputs import BaseModelOutput

    return BaseModelOutput(last_hidden_state=memory)


def attribution_inputs(model, src_ids: torch.Tensor, tgt_ids: torch.Tensor
                       ) -> AttributionInputs:
    """``AttributionInputs`` of one decoding: ``src_ids`` (S,), ``tgt_ids`` (T + 1,) the
    decoder start and the T tokens chosen. Embeddings are the ``embed_tokens`` outputs
    (module docstring); gradients and IG's straight path are taken in that space, which
    differs from the scaled one by a constant factor only (gradient x input and integrated
    gradients do not change under it)."""
    hf, pad_id = model.hf, model.config.pad_id
    encoder, decoder = hf.get_encoder(), hf.get_decoder()
    with torch.no_grad():
        src = encoder.embed_tokens(src_ids[None]).detach()  # (1, S, D)
        tgt = decoder.embed_tokens(tgt_ids[None, :-1]).detach()  # (1, T, D)
        pad = torch.tensor([[pad_id]])
        src_pad = encoder.embed_tokens(pad)[0, 0].detach()  # (D,)
        tgt_pad = decoder.embed_tokens(pad)[0, 0].detach()

    def step_function(step: int, token: int):
        def f(src_e: torch.Tensor, tgt_e: torch.Tensor) -> torch.Tensor:
            b = src_e.shape[0]
            with _hooked(encoder.embed_tokens, lambda _out: src_e):
                memory = encoder(input_ids=src_ids[None].expand(b, -1),
                                 return_dict=True).last_hidden_state  # (B, S, D)
            with _hooked(decoder.embed_tokens, lambda _out: tgt_e):
                out = hf(encoder_outputs=_encoder_outputs(memory),
                         decoder_input_ids=tgt_ids[None, : step + 1].expand(b, -1),
                         use_cache=False, return_dict=True)
            logits = out.logits[:, step]  # (B, V); half precision read as float32
            logits = logits if logits.dtype == torch.float64 else logits.float()
            return torch.log_softmax(logits, dim=-1)[:, token]  # (B,)
        return f

    return AttributionInputs(src, tgt, src_pad, tgt_pad, step_function)


def zeroed_layer_outputs(model, src_ids: torch.Tensor, tgt_ids: torch.Tensor
                         ) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """For each decoder layer: its output (T, D) in the unchanged teacher-forced pass of
    ``src_ids`` (S,) and decoder inputs ``tgt_ids`` (T,); (S, T, D) with source token j's
    cross-attention values zeroed in row j; (T, T, D) with decoder position j's
    self-attention values zeroed in row j."""
    hf = model.hf
    layers = _decoder_layers(model)
    with torch.inference_mode():
        memory = hf.get_encoder()(input_ids=src_ids[None], return_dict=True).last_hidden_state

        def outputs(batch: int, upto: int) -> list[torch.Tensor]:
            """(batch, T, D) the outputs of layers 0..upto."""
            with recording(dict(enumerate(layers[: upto + 1]))) as seen:
                hf(encoder_outputs=_encoder_outputs(memory.expand(batch, -1, -1)),
                   decoder_input_ids=tgt_ids[None].expand(batch, -1), use_cache=False,
                   return_dict=True)
            return [seen[i][1] for i in range(upto + 1)]

        base = outputs(1, len(layers) - 1)
        for i in range(len(layers)):
            zeroed = []
            for kind, batch in (("cross", len(src_ids)), ("decoder", len(tgt_ids))):
                module, names = model.attention(kind, i)
                with _hooked(getattr(module, names[2]), _zero_own_token):
                    zeroed.append(outputs(batch, i)[i])
            yield base[i][0], zeroed[0], zeroed[1]
