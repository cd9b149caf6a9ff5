"""Attention rollout and attention flow: how much each input token reaches a later layer.

One layer's attention map says what a position mixes from the layer just below, not from
the input tokens: after a few layers every position holds a blend of everything. Abnar and
Zuidema draw the model as a graph with a node per (layer, position) and an edge per
attention weight, with the residual connection added as half of each layer's weight on a
position itself. **Rollout** multiplies the layers' matrices: a path carries the product of
its edges' weights, and the paths between two nodes add up. **Flow** treats the weights as
pipe capacities: a path carries at most its narrowest edge, and the value is the most that
can pass from an input token to a node at once (a maximum flow).

Samira Abnar and Willem Zuidema, "Quantifying Attention Flow in Transformers", ACL 2020,
section 3 (residual connections, rollout equation 1, flow). The paper treats an encoder
only; ``decoder_rollout`` carries rollout through an encoder-decoder's cross-attention,
which is this project's extension, not the paper's.

Shape letters: L layers, H heads, T positions (the decoder length in ``decoder_rollout``),
S source length, Tq and Tk query and key positions. Attention arrays are (L, H, Tq, Tk):
rows are queries, columns keys, each row sums to 1, or to 0 for a fully blocked query.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ROW_SUM_ATOL = 1e-3  # float32 (or float16) softmax rows sum to 1 within far less than this
FLOW_SCALE = 1 << 40  # capacities become integers: networkx's max-flow code is exact on them


def _check_attention(name: str, attentions, *, square: bool) -> np.ndarray:
    """``attentions`` as float64 (L, H, Tq, Tk), or a ValueError that says what to fix."""
    a = np.asarray(attentions)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise ValueError(f"{name} must be a real-valued array of attention weights, "
                         f"got dtype {a.dtype}")
    if a.ndim != 4:
        raise ValueError(f"{name} must be 4-D (L, H, Tq, Tk): layers, heads, queries, keys; "
                         f"got {a.ndim}-D shape {a.shape}")
    if 0 in a.shape:
        raise ValueError(f"{name} must have at least one layer, head, query and key; "
                         f"got shape {a.shape}")
    if square and a.shape[2] != a.shape[3]:
        raise ValueError(f"{name} is self-attention and must be square in its last two axes "
                         f"(L, H, T, T); got shape {a.shape}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} holds NaN or infinite values; attention weights are finite")
    if (a < 0).any():
        raise ValueError(f"{name} holds negative values (smallest {a.min():.3g}); attention "
                         f"weights are probabilities, not scores or logits")
    sums = a.sum(-1)  # (L, H, Tq)
    bad = (np.abs(sums - 1.0) > ROW_SUM_ATOL) & (sums > ROW_SUM_ATOL)
    if bad.any():
        l, h, q = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"{name}: every row (query) must sum to 1, or be all 0 for a blocked "
                         f"query; layer {l}, head {h}, query {q} sums to {sums[l, h, q]:.4g}. "
                         f"Are the axes (L, H, Tq, Tk) with the keys last?")
    return a


def _residual(a: np.ndarray) -> np.ndarray:
    """(L, H, Tq, Tk) checked weights -> (L, Tq, Tk) head mean with the residual added."""
    L, _, Tq, Tk = a.shape
    A = 0.5 * a.mean(1) + 0.5 * np.eye(Tq, Tk)  # (L, Tq, Tk)
    return A / A.sum(-1, keepdims=True)  # every row has its 0.5 on the diagonal: never 0


def _rollout(A_hat: np.ndarray) -> np.ndarray:
    """(L, T, T) residual-added layers -> (L, T, T) rollout, R_l = A_hat_l @ R_{l-1}."""
    R = np.empty_like(A_hat)
    R[0] = A_hat[0]
    for l in range(1, len(A_hat)):
        R[l] = A_hat[l] @ R[l - 1]  # (T, T) @ (T, T)
    return R


def residual_attention(attentions) -> np.ndarray:
    """Each layer's attention averaged over heads, with the residual connection added.

    Abnar and Zuidema (2020, section 3): a layer computes V_{l+1} = V_l + W_att V_l =
    (W_att + I) V_l, so "we add an identity matrix to the attention matrix and re-normalize
    the weights": A_hat = 0.5 * mean_h(A) + 0.5 * I, each row divided by its sum. The
    division changes nothing for rows that sum to 1; a fully blocked query (a row of 0)
    becomes a row of the identity, all its weight on itself.

    Args:
        attentions: (L, H, T, T) self-attention weights.

    Returns:
        (L, T, T) float32 A_hat: entry [l, i, j] is the share of position i's state after
        layer l that comes from position j's state before layer l. Rows sum to 1.

    Raises:
        ValueError: not 4-D, not square in the last two axes, empty, negative or non-finite
            values, or rows that sum to neither 1 nor 0.
    """
    a = _check_attention("attentions", attentions, square=True)
    return _residual(a).astype(np.float32)


def attention_rollout(attentions) -> np.ndarray:
    """Attention rollout (Abnar and Zuidema 2020, section 3, equation 1).

    R_1 = A_hat_1 and R_l = A_hat_l @ R_{l-1}, with A_hat from ``residual_attention``: the
    weights of all paths from an input token to a position are multiplied along each path
    and summed over paths.

    Args:
        attentions: (L, H, T, T) self-attention weights.

    Returns:
        (L, T, T) float32: entry [l, i, j] is how much input token j contributes to
        position i after layer l (0-based). Rows sum to 1.

    Raises:
        ValueError: as ``residual_attention``.
    """
    a = _check_attention("attentions", attentions, square=True)
    return _rollout(_residual(a)).astype(np.float32)


def attention_flow(attentions, layer: int = -1) -> np.ndarray:
    """Attention flow (Abnar and Zuidema 2020, section 3): maximum flow from each input token.

    The flow network has a node (b, i) per layer boundary b = 0..L and position i; node
    (0, j) is input token j and (l, i) is position i after layer l (1-based here). An edge
    goes from (l-1, j) to (l, i) with capacity A_hat_l[i, j] (``residual_attention``).
    Entry [i, j] is the maximum flow from (0, j) to (layer + 1, i). Where rollout
    multiplies the weights along a path, flow lets a path carry its narrowest edge, and
    paths that share an edge share its capacity. The graph and its residual network are
    built once and reused for all T * T pairs (networkx's shortest augmenting path
    algorithm, the fastest of its max-flow functions on these layered graphs).

    Rows need not sum to 1: each entry is a separate maximum flow in which input token j
    may use the whole network alone, so two inputs can both count the same edges. A row
    sums to at least 1 (the rollout's proportional flow from all inputs at once is one
    feasible flow, and its part from input j is rollout[layer][i, j] <= flow[i, j]) and at
    most T. Each entry is at most 1, the capacity into node (layer + 1, i). The authors'
    code divides each row by its sum before plotting; divide by ``flow.sum(-1,
    keepdims=True)`` for that view.

    Capacities are rounded to multiples of 2**-40 (networkx's flow code is exact on
    integers and may fail on floating-point round-off), far below float32 precision.

    Args:
        attentions: (L, H, T, T) self-attention weights.
        layer: which layer's output to reach, indexed as the L axis of the rollout
            (0 .. L-1, or negative from the end; -1 is after the last layer), so that
            L = 1 gives A_hat itself.

    Returns:
        (T, T) float32: entry [i, j] is the maximum flow from input token j to position i
        after ``layer``. Values lie in [0, 1].

    Raises:
        ValueError: as ``residual_attention``, or ``layer`` outside -L .. L-1.
    """
    a = _check_attention("attentions", attentions, square=True)
    L = a.shape[0]
    if isinstance(layer, bool) or not isinstance(layer, int | np.integer) or not (
            -L <= layer < L):
        raise ValueError(f"layer must be an integer from {-L} to {L - 1} for {L} layers, "
                         f"got {layer!r}")
    top = int(layer) % L + 1  # the layer boundary of the sinks, 1..L
    caps = np.rint(_residual(a)[:top] * FLOW_SCALE).astype(np.int64)  # (top, T, T)
    return (_max_flows(caps) / FLOW_SCALE).astype(np.float32)


def _max_flows(caps: np.ndarray) -> np.ndarray:
    """(T, T) float64: entry [i, j] the maximum flow from input node (0, j) to node
    (top, i) of the layered network whose edge (l-1, j) -> (l, i) has the integer capacity
    ``caps[l - 1, i, j]`` (``caps``: (top, T, T) int64); the graph and its residual
    network are built once for all pairs (networkx, shortest augmenting path)."""
    # networkx is imported here, when a flow is asked for: importing it costs ~70 ms of
    # every server start (and of the first visit after it).
    import networkx as nx
    from networkx.algorithms.flow import build_residual_network, shortest_augmenting_path

    top, T, _ = caps.shape
    G = nx.DiGraph()
    G.add_nodes_from(range((top + 1) * T))  # node b * T + i is (b, i)
    for l in range(1, top + 1):
        for i, j in zip(*np.nonzero(caps[l - 1]), strict=True):  # A_hat_l[i, j] > 0
            G.add_edge((l - 1) * T + int(j), l * T + int(i), capacity=int(caps[l - 1, i, j]))
    R = build_residual_network(G, "capacity")
    out_cap = caps[0].sum(0)  # (T,) capacity out of each input node (0, j)
    in_cap = caps[top - 1].sum(1)  # (T,) capacity into each sink (top, i)
    flow = np.zeros((T, T), np.float64)
    for i in range(T):
        for j in range(T):
            bound = int(min(out_cap[j], in_cap[i]))  # a cut at either end
            if bound == 0:
                continue
            flow[i, j] = nx.maximum_flow_value(G, j, top * T + i, residual=R, cutoff=bound,
                                               flow_func=shortest_augmenting_path)
    return flow


@dataclass(frozen=True)
class DecoderRollout:
    """Rollout after the last decoder layer (``decoder_rollout``).

    Row t of [source | decoder] sums to 1.

    Attributes:
        source: (T, S) float32: entry [t, s] is how much source token s contributes to
            decoder position t.
        decoder: (T, T) float32: entry [t, u] is how much decoder input u (the token fed at
            step u) contributes to decoder position t.
    """

    source: np.ndarray
    decoder: np.ndarray


def decoder_rollout(encoder_attentions, decoder_attentions, cross_attentions) -> DecoderRollout:
    """Attention rollout through an encoder-decoder, to the decoder's last layer.

    This extends Abnar and Zuidema (2020), who treat an encoder only; the cross-attention
    step is this project's definition, not the paper's. Every residual counts half, as the
    paper's A_hat does.

    R_enc = ``attention_rollout(encoder_attentions)[-1]`` (S, S) says what each encoder
    output holds of each source token. Track D (T, T), the decoder inputs' share, and
    X (T, S), the source tokens' share, starting from D = I, X = 0. For each decoder
    layer l:

    - self-attention with its residual: D <- Shat_l @ D, X <- Shat_l @ X, where Shat_l is
      ``residual_attention(decoder_attentions)[l]``;
    - cross-attention with its residual: D <- 0.5 * D, X <- 0.5 * X + 0.5 * Cbar_l @ R_enc,
      where Cbar_l (T, S) is layer l's cross-attention averaged over heads.

    Then every row of [X | D] sums to 1. As with A_hat, the cross step is renormalised per
    row, [X | D] <- ([X | D] + [Cbar_l @ R_enc | 0]) / (1 + c_t) with c_t the row sum of
    Cbar_l: the same as above when c_t = 1, and no change for a query with every source
    key blocked (c_t = 0).

    Args:
        encoder_attentions: (Le, He, S, S) encoder self-attention.
        decoder_attentions: (Ld, H, T, T) decoder self-attention (causal: row t is 0 past column t).
        cross_attentions: (Ld, H, T, S) decoder-to-encoder attention.

    Returns:
        ``DecoderRollout`` with ``source`` (T, S) = X and ``decoder`` (T, T) = D.

    Raises:
        ValueError: any argument as in ``residual_attention`` (cross-attention need not be
            square), or decoder and cross-attention that differ in layers, heads or T, or
            cross-attention whose keys are not the encoder's S positions.
    """
    enc = _check_attention("encoder_attentions", encoder_attentions, square=True)
    dec = _check_attention("decoder_attentions", decoder_attentions, square=True)
    cross = _check_attention("cross_attentions", cross_attentions, square=False)
    S, (Ld, H, T, _) = enc.shape[2], dec.shape
    if cross.shape[:3] != (Ld, H, T):
        raise ValueError(f"cross_attentions (Ld, H, T, S) = {cross.shape} must have the "
                         f"layers, heads and decoder length T of decoder_attentions "
                         f"{dec.shape}: expected ({Ld}, {H}, {T}, S)")
    if cross.shape[3] != S:
        raise ValueError(f"cross_attentions attend to {cross.shape[3]} source positions but "
                         f"encoder_attentions {enc.shape} has S = {S}; give both for the "
                         f"same sentence")
    R_enc = _rollout(_residual(enc))[-1]  # (S, S)
    S_hat = _residual(dec)  # (Ld, T, T)
    C_bar = cross.mean(1)  # (Ld, T, S)
    D = np.eye(T)  # (T, T)
    X = np.zeros((T, S))  # (T, S)
    for l in range(Ld):
        D, X = S_hat[l] @ D, S_hat[l] @ X  # (T, T) @ (T, T), (T, T) @ (T, S)
        norm = 1.0 + C_bar[l].sum(-1, keepdims=True)  # (T, 1): 2 for rows that sum to 1
        D, X = D / norm, (X + C_bar[l] @ R_enc) / norm  # (T, S) @ (S, S)
    return DecoderRollout(source=X.astype(np.float32), decoder=D.astype(np.float32))
