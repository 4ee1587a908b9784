"""Query: what an agent reads. In: a topic or a channel and the scope keys. Out: a budgeted, labelled surface,
booked in the ledger.

`retrieval` finds and ranks candidates; `render` attaches every label, defuses text and packs budgets;
`surfaces` assembles recall, brief, state and the session brief (`asks` the ones built from more than one);
`economy` books spend and savings; `reports` shapes activity, contests and the validation audit; `dense` is the
door to the optional semantic extra; `messages` and `route` are the plain-text results and capability map every
adapter shares; `listing` lists memory (filtered, sorted, paged by key) and `inspection` shows one item, both
read only (the audited corrections are `memory.corrections`)."""
