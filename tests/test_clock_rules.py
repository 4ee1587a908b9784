"""The store's one time format (`base.clock.iso`): ISO-8601 UTC, milliseconds truncated, a Z."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from cortex_engine.base.clock import iso, parse_iso


def test_iso_is_utc_to_the_millisecond_truncated_and_reads_back() -> None:
    rng = random.Random(7)
    zones = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
    stamps = [datetime.fromtimestamp(rng.uniform(0, 10**11), tz=rng.choice(zones)) for _ in range(2000)]
    stamps += [datetime(2026, 1, 1, 3, 4, 5, 999_999, tzinfo=zones[1]), datetime(1970, 1, 1, tzinfo=UTC)]
    for stamp in stamps:
        utc = stamp.astimezone(UTC)
        assert iso(stamp) == utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    assert iso(stamps[-2]) == "2025-12-31T21:34:05.999Z"
    assert parse_iso(iso(stamps[-2])) == stamps[-2].replace(microsecond=999_000)
