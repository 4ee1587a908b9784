"""Operations: Cortex run from outside. In: a request to install, uninstall, check, seed or evaluate. Out:
Claude Code wiring, health reports, the demo repository and the eval gate.

These modules sit above the facade (`cortex_engine.engine`) and may use it; nothing in a stage folder
(`base`, `store`, `scope`, `memory`, `query`, `capture`) and not the facade itself imports them."""
