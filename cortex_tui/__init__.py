"""The operator TUI: a live view of a branch's memory (Textual)."""
