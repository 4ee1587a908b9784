"""Base: what every stage stands on. The error hierarchy, the injected clock, ids, the one token estimator,
lazy module handles, the label vocabulary (`labels`), value classes that cost no `dataclasses` import (`records`)
and `settings`, the one reader of every `CORTEX_*` variable. Imports nothing else from Cortex."""
