"""The Transformer itself (Vaswani et al., 2017): its configuration, layers, masks, the
encoder-decoder, checkpoint IO, vocabularies and tokenizers, and a pretrained folder's
held-out sentences. Imports nothing else of this project but ``model.errors`` and the
synthetic task (``model.tasks``)."""
