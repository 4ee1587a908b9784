"""Scope and freshness: what git says. In: a working directory and the references a memory makes. Out: the
scope keys every query carries, and per-path and per-symbol verdicts (`exists`, `moved`, `missing`,
`drifted`).

`identity` derives the store and scope keys (`storeinfo` describes a directory's store without opening it);
`references` extracts paths from text; `freshness` checks them
against the checkout's inventory; `history` follows renames through git; `anchors` checks lines and symbols."""
