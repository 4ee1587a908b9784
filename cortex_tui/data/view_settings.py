"""The operator's view settings (the theme chosen in the palette), kept in `$CORTEX_HOME/tui.json`.

Written only when the operator changes a setting (opening the app writes nothing), through a temporary file and a
rename; an unreadable or foreign file is ignored rather than trusted.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

FILE = "tui.json"


def settings_path(home: Path | None) -> Path:
    """Where the settings live for this CORTEX_HOME (None: the environment's)."""
    from cortex_engine.results import cortex_home

    return (home or cortex_home()) / FILE


def load_theme(home: Path | None) -> str | None:
    """The saved theme's name, or None when nothing (valid) was saved."""
    try:
        data = json.loads(settings_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    theme = data.get("theme") if isinstance(data, dict) else None
    return theme if isinstance(theme, str) and theme.isprintable() and len(theme) < 100 else None


def save_theme(home: Path | None, theme: str) -> None:
    """Remember the theme (atomically; a failure is logged, never shown as a crash)."""
    path = settings_path(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".tui-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"theme": theme}, out)
        os.replace(temp, path)
    except OSError as exc:
        log.warning("could not save the theme to %s: %s", path, exc)
