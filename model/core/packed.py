"""A read-only string map kept as one sorted text: the CC-CEDICT index (``cedict``), the
English lemmas (``lemmas``) and pypinyin's phrases (``ui.pinyin``).

A Python dict of 112,000 short strings holds each key and value as its own object (about
50 bytes of header each, plus the table), and the memory of the objects a JSON reader made
on the way stays with the process: CC-CEDICT's gloss dictionary and the verdict's lexicon
held about 115 MB of the server that way. ``PackedMap`` keeps every entry in one string, a
line ``key<TAB>value`` each, sorted by key, and finds a key by binary search over an
``array`` of line offsets: the index file's text is the map, with no object per entry.
A lookup costs O(log n) string slices (microseconds; the header makes a few hundred).
"""

from __future__ import annotations

import functools
import gzip
import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Generic, ParamSpec, TypeVar

import numpy as np

V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")
SEP = "\x1f"  # the unit separator: joins a value's items (``join``/``split``)


def to_gz(text: str) -> bytes:
    """``text`` (``lines``' output) as a prebuilt index file ships it (CC-CEDICT's, the
    lemmas', pypinyin's phrases): UTF-8, gzip'd with no time stamp, so the same text always
    gives the same bytes."""
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def read_gz(path: Path) -> bytes:
    """A prebuilt index file (``to_gz``) unzipped: the bytes ``PackedMap`` reads.
    Raises ``OSError`` if it cannot be read or unzipped."""
    return gzip.decompress(Path(path).read_bytes())


def join(items: Iterable[str]) -> str:
    """The items of a tuple or set value as one string (``SEP`` between them).

    Raises:
        ValueError: an item holds ``SEP``.
    """
    items = list(items)
    if any(SEP in item for item in items):
        raise ValueError("an item holds the separator \\x1f")
    return SEP.join(items)


def split(text: str) -> tuple[str, ...]:
    """``join``'s items back, in order (``""`` gives no items)."""
    return tuple(text.split(SEP)) if text else ()


def split_set(text: str) -> frozenset[str]:
    """``join``'s items back, as a set."""
    return frozenset(split(text))


def lines(pairs: Iterable[tuple[str, str]]) -> str:
    """The text ``PackedMap`` reads: a line ``key<TAB>value`` per pair, sorted by key.

    Raises:
        ValueError: a key repeats, or a key or value holds a tab or a newline.
    """
    pairs = sorted(pairs)
    if len({key for key, _ in pairs}) < len(pairs):
        raise ValueError("a key repeats")
    for key, value in pairs:
        if any(c in key + value for c in "\t\n"):
            raise ValueError(f"the entry {key!r} holds a tab or a newline")
    return "".join(f"{key}\t{value}\n" for key, value in pairs)


class PackedMap(Mapping[str, V], Generic[V]):
    """A read-only ``Mapping[str, V]`` over ``lines``' text, kept as its UTF-8 bytes.

    Args:
        text: ``lines``' output (a line ``key<TAB>value`` per entry, sorted by key), or its
            UTF-8 bytes.
        decode: a value's text -> what a lookup returns (``str`` itself by default, ``split``
            for a tuple, ``split_set`` for a set).

    Raises:
        ValueError: a line has no tab, the text does not end with a newline, the keys
            are not strictly increasing, or the text is 4 GiB or more (offsets are 32-bit).
    """

    def __init__(self, text: str | bytes,
                 decode: Callable[[str], V] = str) -> None:  # type: ignore[assignment]
        data = text.encode("utf-8") if isinstance(text, str) else text
        if data and not data.endswith(b"\n"):
            raise ValueError("a packed map's text ends with a newline")
        if len(data) >= 1 << 32:
            raise ValueError("a packed map's text is under 4 GiB")
        self._data, self._decode = data, decode  # UTF-8 keeps the keys' order, in 1/4 the room
        # Where each line starts and its key ends, found by NumPy over the bytes (a loop in
        # Python took 0.27 s for CC-CEDICT's 112,000 glosses, at every server start).
        raw = np.frombuffer(data, dtype=np.uint8)  # (bytes,)
        ends = np.flatnonzero(raw == 0x0A)  # (n,) each line's newline
        starts = np.concatenate(([0], ends[:-1] + 1))[:len(ends)].astype(np.int64)  # (n,)
        tabs = np.flatnonzero(raw == 0x09)  # every tab
        first = np.searchsorted(tabs, starts)  # (n,) the first tab at or after each start
        tab = np.append(tabs, len(data))[first]  # (n,) len(data): none after the start
        missing = np.flatnonzero(tab > ends)
        if missing.size:
            raise ValueError(f"line {missing[0] + 1} has no tab")
        self._start = array("I", np.append(starts, len(data)).astype(np.uint32).tobytes())
        self._tab = array("I", tab.astype(np.uint32).tobytes())  # (n,) where each key ends
        previous = b""  # one key at a time: a list of them all would scatter small objects
        for i, (a, b) in enumerate(zip(starts.tolist(), tab.tolist(), strict=True)):
            key = data[a:b]
            if i and not previous < key:
                raise ValueError("a packed map's keys are sorted and distinct")
            previous = key

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]],
                   decode: Callable[[str], V] = str) -> PackedMap[V]:  # type: ignore[assignment]
        """The map of (key, value text) ``pairs`` (``lines``, which raises ValueError)."""
        return cls(lines(pairs), decode)

    def __len__(self) -> int:
        return len(self._tab)

    def _key(self, i: int) -> bytes:
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._data[self._start[i]:self._tab[i]]

    def _find(self, key: str) -> int:
        """The line of ``key``, or -1 (``bisect_left`` over the keys: no list of them)."""
        raw = key.encode("utf-8", "surrogatepass")
        i = bisect_left(_Keys(self), raw)
        return i if i < len(self) and self._key(i) == raw else -1

    def __getitem__(self, key: str) -> V:
        i = self._find(key) if isinstance(key, str) else -1
        if i < 0:
            raise KeyError(key)
        value = self._data[self._tab[i] + 1:self._start[i + 1] - 1]
        return self._decode(value.decode("utf-8"))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) >= 0

    def has_prefix(self, prefix: str) -> bool:
        """Whether some key begins with ``prefix`` (a key equal to it counts)."""
        raw = prefix.encode("utf-8", "surrogatepass")
        i = bisect_left(_Keys(self), raw)
        return i < len(self) and self._key(i).startswith(raw)

    def __iter__(self) -> Iterator[str]:
        return (self._key(i).decode("utf-8") for i in range(len(self)))

    def items(self) -> ItemsView[str, V]:
        """The (key, value) pairs in key order, read line by line (no search per key)."""
        return _Items(self)

    def _pairs(self) -> Iterator[tuple[str, V]]:
        data, start, tab = self._data, self._start, self._tab
        for i in range(len(self)):
            yield (data[start[i]:tab[i]].decode("utf-8"),
                   self._decode(data[tab[i] + 1:start[i + 1] - 1].decode("utf-8")))


class _Items(ItemsView):
    """``PackedMap.items()``: iterated line by line."""

    def __iter__(self) -> Iterator[tuple[str, V]]:
        return self._mapping._pairs()


class _Keys:
    """The keys of a ``PackedMap`` as a sequence, for ``bisect_left``."""

    def __init__(self, packed: PackedMap) -> None:
        self._packed = packed

    def __getitem__(self, i: int) -> bytes:
        return self._packed._key(i)

    def __len__(self) -> int:
        return len(self._packed)


def once(load: Callable[P, R]) -> Callable[P, R]:
    """``load`` (a reader of a shipped index: CC-CEDICT's, the lemmas', pypinyin's phrases,
    jieba's dictionary) run once per process and argument, its result kept, like
    ``functools.cache``, and also when threads call it at the same time: the first computes,
    the others wait for its result. (``functools.cache`` lets each of them compute it, which
    on a server started a moment ago meant ``serve.py``'s warm-up and the first visits each
    reading the same files, on the same two cores.) ``cache_clear`` forgets the result."""
    cached = functools.cache(load)
    lock = threading.Lock()

    @functools.wraps(load)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with lock:
            return cached(*args, **kwargs)

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return wrapper
