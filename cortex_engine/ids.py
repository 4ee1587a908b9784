"""Random identifiers, without the `uuid` module: it imports `platform` at import time, a cost every
one-shot command (and every hook) would pay for one call to `uuid4`."""

from __future__ import annotations

import os


def new_id() -> str:
    """A random RFC 4122 version-4 UUID in its usual text form, as `str(uuid.uuid4())` gives."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
