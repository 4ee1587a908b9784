"""Base: what every stage stands on. The error hierarchy, the injected clock, ids, the one token estimator and
lazy module handles. Imports nothing else from Cortex."""
