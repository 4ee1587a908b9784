"""What every `cortex` handler shares: the engine it opens, and how it prints text, JSON and usage errors."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_engine.engine import Engine
    from cortex_engine.results import Surface


class UsageError(Exception):
    """A command line the parser cannot accept."""


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f]")


def emit_json(payload: object) -> None:
    """Print one JSON document on stdout."""
    # JSON escapes C0 controls itself; DEL and the C1 range (U+009B is a CSI) would reach the terminal raw,
    # so they are escaped too. The document decodes to exactly the same text.
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    sys.stdout.write(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def emit_text(text: str) -> None:
    """Print text on stdout, ending in one newline (nothing for no text)."""
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))


def engine_for(args: argparse.Namespace) -> Engine:
    """The engine for the command being run: a one-shot read (`reads` in its row) never creates a store."""
    from cortex_engine.engine import open_engine

    reads = bool(getattr(args, "reads", False))
    return open_engine(args.cwd or os.getcwd(), create=not reads, empty_if_missing=reads)


def surface_out(args: argparse.Namespace, surface: Surface) -> int:
    """Print a surface: its text, or its JSON with --json."""
    if args.json:
        emit_json(surface.to_dict())
    else:
        emit_text(surface.text)
    return 0
