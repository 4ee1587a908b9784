"""What `cortex serve` says about itself and how it takes the stdio wire: shared by the early `initialize`
answer (`serve`) and the SDK server (`mcp_server`), so neither imports the other for them. Standard library only.
"""

from __future__ import annotations

import os
from typing import IO

from cortex_engine.base.labels import GLOSSARY

SERVER_NAME = "cortex"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = (
    "Cortex is this repository's local memory: decisions, blockers, intents and evidence from earlier sessions, "
    f"each labelled {GLOSSARY} when it no longer simply holds, and (from <branch>) or (shared) when it came from a merged branch or the repository's decisions folder. "
    "Call cortex_route once to see which tool answers what."
)


def claim_stdin() -> IO[str]:
    """The wire, read from a private duplicate of fd 0; fd 0 then points at the null device, as the SDK does
    for the streams it claims, so a child process (git) can never consume protocol bytes."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return open(wire, encoding="utf-8", errors="replace", closefd=True)
