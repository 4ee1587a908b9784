"""The injected clock: the engine never reads the wall clock directly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from cortex_engine.base import settings

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """Return the current UTC time."""
    return datetime.now(UTC)


def parse_iso(value: str) -> datetime | None:
    """Parse a stored ISO-8601 UTC timestamp; None when it cannot be parsed."""
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.astimezone(UTC)


def clock_from_env() -> Clock:
    """Return a fixed clock when CORTEX_NOW holds an ISO time (tests, demos), else the system clock."""
    fixed = settings.fixed_now()
    if fixed:
        stamp = parse_iso(fixed)
        if stamp is not None:
            return lambda: stamp
    return system_clock


def iso(stamp: datetime) -> str:
    """Format a timestamp the way the store keeps it: ISO-8601 UTC with milliseconds and a Z."""
    # isoformat truncates to milliseconds like `microsecond // 1000` and ends in "+00:00" (UTC); it is twice as
    # fast as strftime, and a flush formats one time per spool line.
    return stamp.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def ts_min(value: str) -> str:
    """Compact UTC timestamp `YYYY-MM-DD HH:MMZ` for a stored ISO string."""
    return value[:16].replace("T", " ") + "Z"
