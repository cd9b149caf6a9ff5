"""What the tests and the benchmarks share, so that neither uses the other as a library.

- ``harness``: the repository's root, a Streamlit server on a free loopback port
  (``streamlit_server``), Debian's Chromium and its settings, and the in-page JavaScript
  that reads the page's state (``SNAPSHOT_JS``, ``READY_JS``) and its helpers: what
  ``tests/browser`` and the browser benchmarks drive the app with.
- ``hf_tiny``: tiny random-weight Hugging Face folders of every family and geometry, their
  tokenizers trained offline on ``data/hf_tiny_sentences.tsv``: the Hugging Face tests'
  models, and the tokenizers of ``benchmarks/hf_shapes.py``'s published shapes.
- ``torch_reference``: our layers' weights copied into ``torch.nn``'s own layers, the
  reference the model tests compare against.

Nothing here imports ``tests`` or ``benchmarks`` (``tests/test_testkit.py`` holds the rule).
"""
