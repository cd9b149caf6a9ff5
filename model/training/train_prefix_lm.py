"""Train the decoder-only prefix language model (``core.prefix_lm``: ``<s> English <sep>
Chinese </s>`` in one sequence) on the same pairs and with the same tokenizers as the
default English -> Chinese model, by recipe:

    python -m model.training.train --recipe decoder-only-en-zh --out runs/decoder-only  (resumable)

The same loop as the encoder-decoder (``trainer.train_loop``: AdamW, linear warm-up then
cosine decay ending at the time limit, bf16 autocast, the state in ``OUT/train_state/``),
with ``trainer.prefix_lm_loss`` (only the continuation is scored), ``token_batches(joined=
True)`` and validation by greedy translation (``prefix_lm.translate``) scored with
sacrebleu's BLEU and chrF. The best weights by validation BLEU are written as a pretrained
folder with its card each time; the test split is scored afterwards by
``model.training.evaluate`` (as for every recipe).
"""

from __future__ import annotations

import argparse
import time

import torch

from ..core.config import DecoderOnlyConfig
from ..core.decoder_only import DecoderOnlyTransformer
from ..core.prefix_lm import PrefixCodec, PrefixLayout
from ..core.vocab import tokenize_zh
from . import pairs as text_pairs
from .counts import source_counts, without_noise
from .prefix_lm import translate
from .trainer import LoopSettings, cosine_lr, prefix_lm_loss, token_batches, train_loop, valid_loss


def prefix_config(args: argparse.Namespace, layout: PrefixLayout) -> DecoderOnlyConfig:
    """The pre-LN decoder-only Transformer of ``args``' sizes (d_model, nhead, layers,
    dim_feedforward, dropout, max_len) over ``layout``'s one vocabulary, its ``<sep>`` and
    the shared specials; the output projection tied to the embedding."""
    return DecoderOnlyConfig(
        vocab_size=layout.vocab_size, d_model=args.d_model, nhead=args.nhead,
        num_layers=args.layers, dim_feedforward=args.dim_feedforward, dropout=args.dropout,
        max_len=args.max_len, sep_id=layout.sep_id, norm_first=True, tie_word_embeddings=True)


def validate(model: DecoderOnlyTransformer, codec: PrefixCodec, valid, valid_texts, *,
             device: torch.device | str = "cpu") -> dict:
    """Validation loss of the encoded ``valid`` pairs (nats per scored token, no smoothing)
    and the greedy translations' sacrebleu corpus BLEU (``tokenize="zh"``) and chrF against
    ``valid_texts``' Chinese (written as the decoded outputs write it).

    Returns:
        {"valid_loss", "valid_bleu", "valid_chrf"}, rounded.
    """
    import sacrebleu

    vloss = valid_loss(model, valid, 100, device, loss=prefix_lm_loss)
    model.eval()
    hyps = [translate(model, codec, en, max_new_tokens=60) for en, _ in valid_texts]
    refs = ["".join(tokenize_zh(zh)) for _, zh in valid_texts]  # as outputs are written
    return {"valid_loss": round(vloss, 4),
            "valid_bleu": round(sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score, 2),
            "valid_chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2)}


def train_prefix_lm(args: argparse.Namespace, command: str) -> bool:
    """Read the pairs, take the tokenizer and Chinese vocabulary of ``args.vocab_from`` (the
    default model's folder, unchanged), encode the pairs (those longer than ``max_len`` in
    all are dropped), train and write the best weights to ``args.out`` (the state in
    ``args.out/train_state``: the same command resumes).

    Returns:
        True when training ended, False when it paused (SIGTERM or ``--stop-after``).

    Raises:
        ValueError: a bad line in a pairs file, naming its file and line.
    """
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    t_start = time.time()
    train_texts, valid_texts = text_pairs.read_splits(args)
    state_dir = args.out / "train_state"
    text_pairs.prepare_state(args, state_dir)  # --fresh; the tokenizer of vocab_from
    en_side, zh_side = text_pairs.build_vocabularies(train_texts, args, state_dir)
    codec = PrefixCodec(en_side.tokenizer, zh_side.vocab)
    train, _ = codec.encode_corpus(train_texts, args.max_len)
    valid, valid_texts = codec.encode_corpus(valid_texts, args.max_len)
    model = DecoderOnlyTransformer(prefix_config(args, codec.layout)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9,
                            weight_decay=0.01)
    print(f"{len(train):,} training pairs, {len(valid):,} validation pairs, one vocabulary "
          f"of {codec.layout.vocab_size:,}, {model.num_parameters():,} parameters, ready in "
          f"{time.time() - t_start:.0f} s")
    counts = source_counts(without_noise((s for s, _ in train_texts), args.pairs), en_side)
    lengths = text_pairs.source_lengths([(p[1:], c) for p, c in train])  # English + <sep>
    meta = train_loop(
        model, opt, train,
        LoopSettings(args.steps, args.eval_every, args.time_limit_min, "valid_bleu",
                     stop_after=args.stop_after, autocast=args.autocast),
        epoch_batches=lambda epoch: token_batches(train, args.max_tokens, args.seed + epoch,
                                                  joined=True),
        lr=lambda step, used: cosine_lr(step, args.lr, args.warmup, args.steps, time_used=used),
        validate=lambda m: validate(m, codec, valid, valid_texts, device=device),
        on_best=lambda m, meta: text_pairs.write_folder(
            args, m, meta, src_side=en_side, tgt_side=zh_side, command=command,
            n_train=len(train), n_valid=len(valid), lengths=lengths, counts=counts),
        device=device, state_dir=state_dir, loss_fn=prefix_lm_loss)
    if meta["paused"]:
        return False
    print(f"best validation BLEU {meta['best']} at step {meta.get('best_step')}; "
          f"the model is in {args.out}")
    return True
