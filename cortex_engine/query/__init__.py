"""Query: what an agent reads. In: a topic or a channel and the scope keys. Out: a budgeted, labelled surface,
booked in the ledger.

`retrieval` finds and ranks candidates; `render` attaches every label, defuses text and packs budgets;
`surfaces` assembles recall, brief, state and the session brief; `economy` books spend and savings;
`messages` and `route` are the plain-text results and capability map every adapter shares; `inspection`
lists (filtered, sorted, paged by key), inspects, edits and deletes memory for a person, every correction
audited."""
