"""Store: one SQLite file per repository. In: SQL from the stages above. Out: rows.

`database` opens it (settings, schema, forward migrations, the version guard, error mapping) and holds the one
transaction helper, `transaction`, and the one scope condition, `in_scopes` (notes and memory items store an
integer scope id; the `scoped_notes` / `scoped_items` views give rows their key back); `queries` names the SQL the rule
modules ask for instead of running their own; `reports` the SQL of the facade's reports; `redact` is the one cleaning
choke point every string parameter passes through on its way in."""
