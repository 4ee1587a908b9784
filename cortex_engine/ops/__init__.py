"""Operations: Cortex run from outside. In: a request to install, uninstall, check, seed or evaluate. Out:
Claude Code wiring, health reports, the demo repository and the eval gate.

These modules sit above the facade (`cortex_engine.engine`) and use it; nothing in a stage folder and not the
facade itself imports them. Where one reaches past the facade into a stage module (doctor reading a store it must
not change, backup replacing the store file, the demo playing the capture hook), ARCHITECTURE.md's table "What
reaches past the facade" names the module and the reason, and `tests/test_imports.py` holds the code to it."""
