"""Backends: our checkpoints and Hugging Face encoder-decoders behind one interface
(``protocol.Backend``): validated input, ``generate`` and ``teacher_force`` returning a
``DecodeTrace``, masks, positional encodings, and the inputs the analysis code recomputes a
head or the embeddings from (``records``).

Both are one class, ``translator.Translator``, which writes the decoding once and is
composed of the parts each backend supplies (``parts``: the network, the source side, the
target side, the internals): ours in ``ours``, Hugging Face's in ``hf`` and
``hf_tokenizer``. ``load`` opens either by name or folder; ``heads`` switches heads off in
either.
"""
