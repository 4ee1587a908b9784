"""Store identity, pragmas, schema version guard and forward migration."""

from __future__ import annotations

import ast
import functools
import gzip
import re
import sqlite3
from pathlib import Path

import pytest

from cortex_engine.base.errors import StoreRefused
from cortex_engine.capture import flush
from cortex_engine.engine import Engine, describe_store
from cortex_engine.scope.identity import detect_scope, store_identity
from cortex_engine.store.database import SCHEMA_VERSION, connect

from .conftest import Repo, git


def test_worktrees_share_one_store_and_clones_do_not(repo: Repo, tmp_path: Path) -> None:
    """Every worktree of a repository resolves to the same store; a clone gets its own."""
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.path), str(clone))
    main_id = store_identity(str(repo.path))
    sub = repo.write("src/pkg/mod.py").parent
    assert store_identity(str(linked)).db_path == main_id.db_path
    assert store_identity(str(sub)).db_path == main_id.db_path
    assert store_identity(str(clone)).db_path != main_id.db_path
    assert main_id.store_dir.name == f"repo-{main_id.store_id}"
    assert len(main_id.store_id) == 16


def test_store_path_honours_cortex_home(repo: Repo, isolated_home: Path) -> None:
    """The store lives under $CORTEX_HOME/projects."""
    info = describe_store(repo.path)
    assert Path(info.path).is_relative_to(isolated_home / ".cortex" / "projects")
    assert info.exists is False
    assert info.degraded is False


def test_degraded_identity_outside_git(tmp_path: Path) -> None:
    """Outside git the identity falls back to the directory and says so."""
    plain = tmp_path / "plain"
    plain.mkdir()
    info = describe_store(plain)
    assert info.degraded is True
    assert "not a git repository" in (info.degraded_reason or "")
    assert "degraded" in info.derived
    assert info.scope_key.startswith("project:")


def test_describe_store_creates_nothing(repo: Repo) -> None:
    """`cortex store` reports without creating the store."""
    info = describe_store(repo.path)
    assert not Path(info.path).exists()


def test_pragmas_and_version(engine: Engine) -> None:
    """WAL, foreign keys and the current schema version are in force."""
    assert engine.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert engine.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert engine.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    version = engine.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)


def _set_version(db: Path, value: str) -> None:
    conn = connect(db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (value,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize(
    ("value", "code", "words"),
    [(str(SCHEMA_VERSION + 1), "newer_schema", "newer Cortex"), ("seven", "corrupt_schema_version", "corrupt")],
)
def test_newer_or_corrupt_store_is_refused_and_untouched(repo: Repo, clock, value: str, code: str, words: str) -> None:
    """A store from a newer version, or with a corrupt version, is refused and not written to."""
    engine = Engine(repo.path, clock=clock)
    engine.note("decision", "use kafka for the queue", "queue")
    db = engine.identity.db_path
    engine.close()
    _set_version(db, value)
    before = db.read_bytes()
    with pytest.raises(StoreRefused) as caught:
        Engine(repo.path, clock=clock)
    assert caught.value.code == code
    assert words in caught.value.message
    assert "\n" not in caught.value.message
    assert db.read_bytes() == before
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 1
    conn.close()


def test_garbage_file_is_refused(repo: Repo, clock) -> None:
    """A file that is not SQLite at all is refused with a one-line message and left as it was."""
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreRefused) as caught:
        Engine(repo.path, clock=clock)
    assert caught.value.code == "unreadable_store"
    assert db.read_bytes() == b"this is not a database" * 100


def test_migration_runs_forward_from_an_empty_versioned_store(repo: Repo, clock) -> None:
    """A store whose meta says version 0 is migrated to the current version on open."""
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    conn.commit()
    conn.close()
    engine = Engine(repo.path, clock=clock)
    assert engine.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert engine.note("insight", "migration leaves a usable store").id
    engine.close()


def test_a_store_stamped_older_than_its_tables_migrates_again_keeping_every_column(repo: Repo, clock) -> None:
    """A version stamp set back one below its tables (by hand, or meta restored from an older copy) re-runs the last
    migration: the column it adds is already there and stays, and the store opens at the current version."""
    engine = Engine(repo.path, clock=clock)
    kept = engine.note("insight", "the column added last survives a second migration").item_id
    engine.conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION - 1),))
    engine.conn.commit()
    engine.close()
    again = Engine(repo.path, clock=clock)
    assert again.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert "encoder" in {row[1] for row in again.conn.execute("PRAGMA table_info(item_vectors)")}
    assert again.inspect_memory(kept).item["kind"] == "note:insight"
    again.close()


def test_every_transaction_goes_through_the_store_helper() -> None:
    """Only store.py opens, commits or rolls back a transaction; every other module uses `store.transaction`
    (a savepoint inside one is fine). Hand-rolled copies drifted: one rolled back with a bare ROLLBACK that
    masks the real error after SQLITE_FULL."""
    import re

    statement = re.compile(r"""execute\(\s*f?["'](?:BEGIN|COMMIT|END|ROLLBACK(?!\s+TO))\b""", re.IGNORECASE)
    root = Path(__file__).resolve().parent.parent
    sources = [p for package in ("cortex_engine", "cortex_tui") for p in sorted((root / package).rglob("*.py"))]
    assert len(sources) > 40
    found = [
        f"{p.relative_to(root)}:{n}"
        for p in sources
        if p.name != "database.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if statement.search(line)
    ]
    assert found == []


ROOT = Path(__file__).resolve().parent.parent
SQL_CALLS = ("execute", "executemany", "executescript")


@functools.cache
def _sql_calls(source: str) -> list[tuple[int, str | None]]:
    """Every `.execute`/`.executemany`/`.executescript` call in a module: its line and its statement's text (an
    f-string's placeholders as written; None when the statement is computed elsewhere). Parsed once per source
    (three checks below read every module), and not at all when the source never spells `execute`."""
    found: list[tuple[int, str | None]] = []
    if "execute" not in source:
        return found
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            first = node.args[0] if node.args else None
            text = None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                text = first.value
            elif isinstance(first, ast.JoinedStr):
                text = "".join(str(v.value) if isinstance(v, ast.Constant) else ast.unparse(v) for v in first.values)
            found.append((node.lineno, text))
    return found


def _engine_modules() -> dict[str, Path]:
    """Every module outside the store layer, named as ARCHITECTURE.md names them (`memory/notes`, `cortex_tui/app`)."""
    paths = [
        *[p for p in (ROOT / "cortex_engine").rglob("*.py") if "store" not in p.relative_to(ROOT).parts[1:2]],
        *(ROOT / "cortex_tui").rglob("*.py"),
    ]
    named = {}
    for path in paths:
        rel = path.relative_to(ROOT).with_suffix("")
        name = "/".join(rel.parts[1:] if rel.parts[0] == "cortex_engine" else rel.parts)
        named[name] = path
    return named


def _sql_table() -> set[str]:
    """The modules ARCHITECTURE.md's "Where SQL is written" lets keep statements of their own."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("### Where SQL is written\n", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ((?:`[\w/]+`(?:, )?)+) \|", section, re.M)
    return {f"{stage}/{module}" for stage, modules in rows for module in re.findall(r"`([\w/]+)`", modules)}


def _clean_modules() -> list[str]:
    return sorted(set(_engine_modules()) - _sql_table())


@pytest.mark.parametrize("module", _clean_modules())
def test_rule_modules_ask_named_queries_instead_of_running_sql(module: str) -> None:
    """Every module ARCHITECTURE.md does not list (the subagent, reflex, operator and retention rules, the facade,
    the adapters, the TUI, ...) asks `store/queries` or a stage instead of running SQL: a schema change is made in
    the store layer and the listed modules, nowhere else."""
    path = _engine_modules()[module]
    assert [f"{module}.py:{line}" for line, _ in _sql_calls(path.read_text(encoding="utf-8"))] == []


def test_the_clean_list_covers_the_rule_modules_and_the_faces() -> None:
    """The parametrized list above is computed, not typed: it holds the modules that must stay clean."""
    clean = set(_clean_modules())
    assert {"capture/agents", "capture/reflex", "operator", "capture/gc", "engine", "adapters/cli"} <= clean
    assert "cortex_tui/app" in clean and len(clean) > 60
    assert "memory/notes" not in clean  # the table was read


def _stale_rows(table: set[str], sources: dict[str, str]) -> list[str]:
    """Listed modules that are gone or run no SQL any more."""
    return sorted(m for m in table if m not in sources or not _sql_calls(sources[m]))


def test_the_sql_table_lists_only_modules_that_run_sql() -> None:
    """A row of the table that no longer runs SQL is removed, so the list of exceptions only shrinks."""
    table = _sql_table()
    assert len(table) > 20
    assert _stale_rows(table, {m: p.read_text(encoding="utf-8") for m, p in _engine_modules().items()}) == []


def _statements(sources: dict[str, str]) -> dict[str, set[str]]:
    """Each statement's normalized text → the modules that run it (computed statements and PRAGMAs left out)."""
    found: dict[str, set[str]] = {}
    for module, source in sources.items():
        for _, text in _sql_calls(source):
            if text is not None and not text.lstrip().upper().startswith("PRAGMA"):
                found.setdefault(" ".join(text.split()).lower(), set()).add(module)
    return found


def _written_twice(sources: dict[str, str], store: dict[str, str]) -> list[str]:
    """Statements a module outside the store runs that another such module, or the store layer, also writes."""
    named = _statements(store)
    return sorted(
        f"{sorted(where)}: {text[:80]}"
        for text, where in _statements(sources).items()
        if len(where) > 1 or text in named
    )


def test_no_statement_is_written_in_two_modules() -> None:
    """The same SQL in two rule modules (or in one and `store/`) is named once in `store/queries` and asked for."""
    sources = {
        m: p.read_text(encoding="utf-8")
        for m, p in _engine_modules().items()
        if not m.startswith(("ops/", "cortex_tui"))
    }
    store = {p.stem: p.read_text(encoding="utf-8") for p in (ROOT / "cortex_engine" / "store").glob("*.py")}
    assert len(_statements(sources)) > 150 and "SELECT * FROM scoped_notes WHERE id=?" in store["queries"]
    assert _written_twice(sources, store) == []


def test_the_sql_checks_see_a_repeated_statement_and_a_stray_call() -> None:
    """The checkers themselves: a statement in two modules, one the store names, an f-string written twice; a
    PRAGMA and a computed statement are not compared; any `execute` call counts against a clean module."""
    sources = {
        "memory/a": 'c.execute("SELECT 1 FROM notes WHERE id=?", (i,))\nc.execute(f"DELETE FROM {t} WHERE x=?")',
        "query/b": 'c.execute("select 1  from notes\\n where id=?")\nc.execute("PRAGMA data_version")\nc.execute(q)',
        "capture/c": 'c.executemany("SELECT value FROM meta WHERE key=?", k)\nc.execute(f"DELETE FROM {t} WHERE x=?")',
        "query/d": 'c.execute("PRAGMA data_version")',
    }
    store = {"queries": 'c.execute("SELECT value FROM meta WHERE key=?", (k,))'}
    assert _written_twice(sources, store) == [
        "['capture/c', 'memory/a']: delete from {t} where x=?",
        "['capture/c']: select value from meta where key=?",
        "['memory/a', 'query/b']: select 1 from notes where id=?",
    ]
    assert [line for line, _ in _sql_calls(sources["query/b"])] == [1, 2, 3]
    assert _stale_rows({"memory/a", "query/e", "query/gone"}, {**sources, "query/e": "x = 1"}) == [
        "query/e",
        "query/gone",
    ]


V7_STORE = Path(__file__).parent / "fixtures" / "store_v7.db.gz"
NOTE_COLUMNS = (
    "rowid, id, session_id, scope_key, timestamp, kind, subject, content, alternatives, status, conflict, "
    "source, origin"
)
ITEM_COLUMNS = (
    "rowid, id, session_id, scope_type, scope_key, kind, source_table, source_id, subject, text, state, importance, "
    "access_count, last_accessed_at, created_at"
)


def _memory(conn: sqlite3.Connection, notes: str, items: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row that holds memory, each note and item with its scope as the key string, in rowid order."""
    return {
        "notes": [tuple(r) for r in conn.execute(f"SELECT {NOTE_COLUMNS} FROM {notes} ORDER BY rowid")],
        "items": [tuple(r) for r in conn.execute(f"SELECT {ITEM_COLUMNS} FROM {items} ORDER BY rowid")],
        "references": [tuple(r) for r in conn.execute("SELECT * FROM memory_references ORDER BY id")],
        "anchors": [tuple(r) for r in conn.execute("SELECT * FROM memory_anchors ORDER BY id")],
        "sessions": [tuple(r) for r in conn.execute("SELECT * FROM sessions ORDER BY id")],
        "kafka": [
            tuple(r)
            for r in conn.execute(
                "SELECT rowid FROM memory_items_fts WHERE memory_items_fts MATCH 'kafka OR retry' ORDER BY rowid"
            )
        ],
    }


def test_schema_7_store_migrates_on_open_keeps_every_row_and_shrinks(repo: Repo, clock) -> None:
    """A store written by schema 7 (tests/fixtures/store_v7.db.gz, made by the schema-7 build) opens as the current
    schema (8 rebuilt the tables; 9 added three indexes).

    Notes and items move to integer scope ids with their rowids, references, anchors and full-text index intact,
    the file shrinks, and reads through the engine still see exactly this scope's memory: the main branch's
    contest and supersession, and nothing of the feature branches stored beside it.
    """
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    db.write_bytes(gzip.decompress(V7_STORE.read_bytes()))
    old = sqlite3.connect(db)
    assert old.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "7"
    (main_key,) = old.execute("SELECT scope_key FROM notes WHERE scope_key LIKE '%:main' LIMIT 1").fetchone()
    here = detect_scope(str(repo.path)).key
    for table in ("notes", "memory_items"):  # the fixture's main branch becomes this repository's
        old.execute(f"UPDATE {table} SET scope_key=? WHERE scope_key=?", (here, main_key))
    old.commit()
    before = _memory(old, "notes", "memory_items")
    booked = [key for (key,) in old.execute("SELECT key FROM spool_seen")]
    old.close()
    size_before = db.stat().st_size
    assert len(before["notes"]) > 60 and before["anchors"] and before["references"] and before["kafka"]
    assert len(booked) == 50 and all(key.startswith(("PostToolUse:", "PostToolUseFailure:")) for key in booked)

    engine = Engine(repo.path, clock=clock)
    conn = engine.conn
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert _memory(conn, "scoped_notes", "scoped_items") == before
    # Schema 16: each booked spool key as a flush now computes it, so a claim replayed after the upgrade is known.
    assert sorted(key for (key,) in conn.execute("SELECT key FROM spool_seen")) == sorted(
        flush.spool_key(*key.split(":", 1)) for key in booked
    )
    for table in ("notes", "memory_items"):
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        assert "scope_id" in columns and "scope_key" not in columns
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.execute("INSERT INTO memory_items_fts(memory_items_fts) VALUES ('integrity-check')")
    engine.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert db.stat().st_size < size_before

    recalled = engine.recall("job queue kafka").text
    assert "use kafka for the job queue" in recalled and "never use kafka for the job queue" in recalled
    assert "contested" in recalled.lower()
    retry = engine.recall("retry policy").text
    assert "adds two to every attempt now" in retry

    def shown(scope_test: str) -> list[bool]:
        rows = conn.execute(
            f"SELECT content FROM scoped_notes WHERE scope_key {scope_test} ? AND kind='insight' "
            "ORDER BY rowid LIMIT 3",
            (here,),
        ).fetchall()
        return [row[0][:40] in engine.recall(row[0]).text for row in rows]

    assert shown("=") == [True, True, True]
    assert shown("!=") == [False, False, False]
    assert engine.note("insight", "a migrated store takes new notes").id
    engine.close()


def test_session_start_reads_through_its_partial_indexes(engine: Engine) -> None:
    """The SessionStart brief reads the newest live items and the open contests through schema 9's partial
    indexes. SQLite uses a partial index only when the query repeats its WHERE terms, so a query rewritten
    with other words (or the index dropped) silently goes back to reading every item of the scope."""
    engine.note("decision", "use sqlite for the job ledger", "job ledger")
    engine.note("decision", "do not use sqlite for the job ledger", "job ledger")
    engine.note("insight", "the spool flushes at turn end")
    statements: list[str] = []
    engine.conn.set_trace_callback(statements.append)
    try:
        engine.start_session(None)
        assert "[contested]" in engine.session_brief().text
    finally:
        engine.conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    plans = {detail for s in selects for *_, detail in engine.conn.execute("EXPLAIN QUERY PLAN " + s)}
    used = {name for name in ("memory_items_live", "notes_open_contests") if any(name in d for d in plans)}
    assert len(selects) > 5 and used == {"memory_items_live", "notes_open_contests"}


V9_STORE = Path(__file__).parent / "fixtures" / "store_v9.db.gz"


def _payload(conn: sqlite3.Connection, tables: tuple[str, ...]) -> int:
    """Bytes of row content the tables and their indexes hold (SQLite's dbstat; page overhead left out)."""
    marks = ",".join("?" * len(tables))
    return int(
        conn.execute(
            f"SELECT SUM(payload) FROM dbstat WHERE name IN ({marks}) OR name IN "
            f"(SELECT name FROM sqlite_master WHERE type='index' AND tbl_name IN ({marks}))",
            tables + tables,
        ).fetchone()[0]
    )


def test_schema_9_store_migrates_to_text_once_and_integer_keys_losing_nothing(repo: Repo, clock) -> None:
    """A store written by schema 9 (tests/fixtures/store_v9.db.gz, made by tests/fixtures/make_store_v9.py under
    the schema-9 build) opens as the current schema with every note, item, reference, anchor and session as it was
    read before (through the views readers use), rowids kept, each note's content stored once, and a smaller file.

    The note whose content has a line shaped like a trailer (its projection indents it) keeps its own copy.
    """
    db = store_identity(str(repo.path)).db_path
    db.parent.mkdir(parents=True)
    db.write_bytes(gzip.decompress(V9_STORE.read_bytes()))
    old = sqlite3.connect(db)
    assert old.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "9"
    here = detect_scope(str(repo.path)).key
    old.execute("UPDATE scopes SET key=? WHERE key LIKE 'branch:%:main'", (here,))
    old.commit()
    before = _memory(old, "scoped_notes", "scoped_items")
    payload_before = _payload(old, ("notes", "memory_items", "memory_references"))
    episodes = old.execute("SELECT * FROM episodes ORDER BY rowid").fetchall()
    old.close()
    assert len(before["notes"]) == 22 and len(before["references"]) > 10 and before["anchors"] and before["kafka"]

    engine = Engine(repo.path, clock=clock)
    conn = engine.conn
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert _memory(conn, "scoped_notes", "scoped_items") == before
    # Schema 14 indexes the failures by summary: every episode is kept as it was.
    assert [tuple(r) for r in conn.execute("SELECT * FROM episodes ORDER BY rowid")] == episodes
    assert any(r[3] == "command_failure" for r in episodes)
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='episodes_failure'").fetchone()[0] == 1
    explicit = [r[0] for r in conn.execute("SELECT content FROM notes WHERE content IS NOT NULL")]
    assert len(explicit) == 1 and "\nSubject: this line is the author's" in explicit[0]
    assert conn.execute("SELECT COUNT(*) FROM item_refs WHERE raw_reference IS NOT NULL").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM git_oids").fetchone()[0] == 1
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.execute("INSERT INTO memory_items_fts(memory_items_fts) VALUES ('integrity-check')")
    assert _payload(conn, ("notes", "memory_items", "item_refs", "git_oids")) < 0.75 * payload_before
    recalled = engine.recall("unicode café").text
    assert "naïve café → 日本語 text survives the store 🎉" in recalled
    assert "a feature-branch note" not in engine.recall("feature-branch note").text
    assert engine.note("insight", "a migrated store takes new notes about src/db/pool.py").id
    engine.close()


def test_a_note_keeps_its_content_whatever_happens_to_its_item(engine: Engine) -> None:
    """Schema 11 stores a note's content once, in its item's text. Any write to the item through raw SQL (an edit
    that drops the content, a re-projection, a deletion) leaves the note's content readable and exact."""
    conn = engine.conn
    kept = engine.note("decision", "use kafka for the job queue — ünïcode too", "job queue", ["rabbitmq"])
    gone = engine.note("insight", "this note's item is deleted under it")

    def content(note_id: str) -> str:
        return str(conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note_id,)).fetchone()[0])

    assert conn.execute("SELECT COUNT(*) FROM notes WHERE content IS NULL").fetchone()[0] == 2
    conn.execute("UPDATE memory_items SET text='something else entirely' WHERE id=?", (kept.item_id,))
    assert content(kept.id) == "use kafka for the job queue — ünïcode too"
    conn.execute(
        "UPDATE memory_items SET text=? WHERE id=?",
        ("decision: use kafka for the job queue — ünïcode too\nSubject: job queue", kept.item_id),
    )
    assert conn.execute("SELECT content FROM notes WHERE id=?", (kept.id,)).fetchone()[0] is None
    assert content(kept.id) == "use kafka for the job queue — ünïcode too"
    conn.execute("DELETE FROM memory_items WHERE id=?", (gone.item_id,))
    assert content(gone.id) == "this note's item is deleted under it"
    assert (
        conn.execute("SELECT COUNT(*) FROM memory_references WHERE memory_item_id=?", (gone.item_id,)).fetchone()[0]
        == 0
    )


def test_a_new_note_is_written_shared_with_its_item_not_rewritten_after(engine: Engine) -> None:
    """A note's row is inserted already sharing its content with its item (content NULL, its length
    kept), so the sharing trigger has no row to rewrite: writing a note updates no row of `notes`."""
    conn = engine.conn
    conn.execute("CREATE TEMP TABLE rewritten (id TEXT)")
    conn.execute(
        "CREATE TEMP TRIGGER count_rewrites AFTER UPDATE ON main.notes BEGIN INSERT INTO rewritten VALUES (old.id); END"
    )
    plain = engine.note("insight", "the pool in src/db/pool.py times out after 30 s")
    multi = engine.note("insight", "first line\nSubject: a line the projection indents, so not shared")
    assert conn.execute("SELECT COUNT(*) FROM temp.rewritten").fetchone()[0] == 0
    rows = {
        r["id"]: r
        for r in conn.execute("SELECT id, content, content_chars FROM notes WHERE id IN (?,?)", (plain.id, multi.id))
    }
    assert rows[plain.id]["content"] is None and rows[plain.id]["content_chars"] == len(plain.content)
    assert rows[multi.id]["content"] == multi.content and rows[multi.id]["content_chars"] is None
    for note in (plain, multi):
        assert conn.execute("SELECT content FROM scoped_notes WHERE id=?", (note.id,)).fetchone()[0] == note.content


def test_a_label_added_to_a_shared_note_leaves_its_row_alone_and_its_content_whole(engine: Engine) -> None:
    """Schema 15: a note's item text rewritten with the same leading `<kind>: <content>` (a contest's
    `Conflict:` trailer, a supersession) no longer copies the content back into the note row and clears it again; each
    such round trip grew a packed row and split its page (the 10k store: 11.14 MiB, 10.97 with this). A rewrite that
    changes the content still keeps the old content in the row, so the note never loses its text."""
    conn = engine.conn
    first = engine.note("decision", "use kafka for the queue engine", "queue")
    conn.execute("CREATE TEMP TABLE rewritten (id TEXT)")
    conn.execute(
        "CREATE TEMP TRIGGER count_rewrites AFTER UPDATE OF content ON main.notes BEGIN "
        "INSERT INTO rewritten VALUES (old.id); END"
    )
    engine.note("decision", "do not use kafka for the queue engine", "queue")  # contests the first: a trailer added
    item = conn.execute("SELECT text FROM memory_items WHERE id=?", (f"notes:{first.id}",)).fetchone()["text"]
    assert "Conflict: true" in item
    assert conn.execute("SELECT COUNT(*) FROM temp.rewritten WHERE id=?", (first.id,)).fetchone()[0] == 0
    conn.execute("UPDATE memory_items SET text='decision: something else' WHERE id=?", (f"notes:{first.id}",))
    assert (
        conn.execute("SELECT content FROM notes WHERE id=?", (first.id,)).fetchone()[0]
        == "use kafka for the queue engine"
    )


def test_every_index_is_one_a_named_query_plan_uses(engine: Engine) -> None:
    """Each index of the schema is listed in `queries.INDEX_QUERIES` with the query that needs it, and SQLite's
    plan for that query (EXPLAIN QUERY PLAN, on a store holding rows) uses it. An index nobody lists fails here:
    it costs every write and the store's size, so it stays only for a plan that reads through it."""
    from cortex_engine.store.queries import INDEX_QUERIES

    for n in range(30):
        engine.note("decision" if n % 3 else "insight", f"fact {n} about src/db/pool.py", f"subject {n % 5}")
    engine.log_event("cmd", command="pytest", exit_code=1, stderr="boom")
    engine.start_session()
    conn = engine.conn
    indexes = {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='index' AND name NOT LIKE 'sqlite_autoindex_%'"
        )
    }
    assert indexes == set(INDEX_QUERIES)
    unused = {
        name: [r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
        for name, (sql, params) in INDEX_QUERIES.items()
    }
    unused = {name: plan for name, plan in unused.items() if not any(f"INDEX {name} " in f"{d} " for d in plan)}
    assert unused == {}


def test_a_new_store_made_from_what_the_first_one_learned_is_what_the_migrations_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second brand-new store of a process gets the schema and seed rows the first one's migrations wrote,
    without running them again: the same objects, the same rows; a version-0 file that already holds a table of
    its own (the replay would not make what the migrations make) still runs every migration."""
    from cortex_engine.store import database

    monkeypatch.setattr(database, "_FRESH", [])
    ran: list[str] = []
    real = database.statements
    monkeypatch.setattr(database, "statements", lambda script: ran.append(script) or real(script))
    opened = [
        database.open_store(tmp_path / name / "cortex.db", root=f"/{name}", now=f"2026-08-0{n}")
        for n, name in enumerate("ab", 1)
    ]
    assert len(ran) == len(database.MIGRATIONS)  # the second store ran none of them
    first, second = opened
    assert (
        database.schema_objects(first) == database.schema_objects(second) == database.expected_objects(SCHEMA_VERSION)
    )
    meta = [{str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")} for conn in opened]
    # the same seed rows; each store's own root and creation time, never the first store's
    assert meta[1] == {**meta[0], "root_path": "/b", "created_at": "2026-08-02"}
    assert (meta[0]["root_path"], meta[0]["created_at"]) == ("/a", "2026-08-01")
    for conn in opened:
        conn.close()
    odd = tmp_path / "odd" / "cortex.db"
    odd.parent.mkdir()
    plain = sqlite3.connect(odd)
    plain.execute("CREATE TABLE brought_along(x)")
    plain.close()
    before = len(ran)
    migrated = database.open_store(odd, root="/r", now="2026-08-02")
    assert len(ran) - before == len(database.MIGRATIONS)
    assert database.schema_objects(migrated) > database.expected_objects(SCHEMA_VERSION)
    migrated.close()


def test_a_file_that_held_objects_of_its_own_teaches_later_new_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first store a process migrates is a file that already held a table (brought along in a repository, say):
    the next brand-new store gets exactly what the migrations make, none of that table and none of its rows."""
    from cortex_engine.store import database

    monkeypatch.setattr(database, "_FRESH", [])
    odd = tmp_path / "odd" / "cortex.db"
    odd.parent.mkdir()
    plain = sqlite3.connect(odd)
    plain.execute("CREATE TABLE brought_along(x)")
    plain.execute("INSERT INTO brought_along VALUES ('from elsewhere')")
    plain.commit()
    plain.close()
    database.open_store(odd, root="/r", now="2026-08-02").close()
    fresh = database.open_store(tmp_path / "fresh" / "cortex.db", root="/r", now="2026-08-02")
    try:
        assert database.schema_objects(fresh) == database.expected_objects(SCHEMA_VERSION)
    finally:
        fresh.close()
