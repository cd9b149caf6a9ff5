"""Backends: our checkpoints (``ours.Translator``) and Hugging Face encoder-decoders
(``hf.HFTranslator``, a subclass) behind one interface: validated input, ``generate`` and
``teacher_force`` returning a ``DecodeTrace``, masks, positional encodings, and the inputs
the analysis code recomputes a head or the embeddings from (``records``). ``load`` opens
either by name or folder; ``heads`` switches heads off in either."""
