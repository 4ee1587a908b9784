"""Store: one SQLite file per repository. In: SQL from the stages above. Out: rows.

`database` opens it (settings, schema, forward migrations, the version guard, error mapping) and holds the one
transaction helper, `transaction`; `queries` names the SQL the rule modules ask for instead of running their
own; `redact` is the one cleaning choke point every string parameter passes through on its way in."""
