"""Analysis on top of any backend: the inside of one head, a padded batch and the
positional encodings (``internals``), per-head statistics (``headstats``), head importance
and pruning (``ablation``, ``pruning``), rollout and flow (``aggregate``), alignment
against gold links (``alignment``) and subword pieces grouped into words (``words``)."""
