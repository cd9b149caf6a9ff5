"""The views of the page, one module per view or family of views: `panels` (the view picker,
the attention views, positions, masks), `heads`, `attribution`, `side_by_side`, `compare`
(branching, beams, the reference) and `teaching` (inside one head, a padded batch,
positional extras). Each draws from a trace with the shared parts of `ui`."""
