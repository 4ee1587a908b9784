"""Random identifiers, without the `uuid` module: it imports `platform` at import time, a cost every
one-shot command (and every hook) would pay for one call to `uuid4`.

`seeded` makes the ids deterministic for a while (the demo and the TUI snapshots), in this one place.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_draw: Callable[[], bytes] | None = None  # a seeded source of 16 bytes while `seeded` is active


def new_id() -> str:
    """A random RFC 4122 version-4 UUID in its usual text form, as `str(uuid.uuid4())` gives."""
    raw = bytearray(_draw() if _draw is not None else os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Draw ids from a generator seeded with `seed` inside the block (the same ids as
    `uuid.UUID(int=random.Random(seed).getrandbits(128), version=4)` would give), then randomly again."""
    import random

    global _draw
    rng = random.Random(seed)
    previous, _draw = _draw, lambda: rng.getrandbits(128).to_bytes(16, "big")
    try:
        yield
    finally:
        _draw = previous
