"""The SQLite store: connection settings, forward migrations (the SQL is `store.schema`) and the version guard."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from cortex_engine.base import settings
from cortex_engine.base.errors import StoreBusy, StoreDamaged, StoreFull, StoreReadOnly, StoreRefused, StoreUnavailable
from cortex_engine.store.redact import CleanConnection
from cortex_engine.store.schema import MIGRATIONS, spool_digest, statements
from cortex_engine.store.schema import SCHEMA_VERSION as SCHEMA_VERSION  # re-exported: callers read it here

BUSY_TIMEOUT_MS = 5000
WAL_MAX_BYTES = 4 * 1024 * 1024
WAL_MIN_BYTES = 4096


_UPGRADE_HINT = "upgrade Cortex (pip install -U cortex-memory-layer) and try again"


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open a connection with the store's pragmas (WAL, foreign keys, busy timeout).

    The connection cleans every string parameter (`redact.CleanConnection`): the one choke point that keeps
    secrets and terminal escapes out of the store, whichever path writes.
    """
    if readonly:
        conn = sqlite3.connect(
            f"file:{quote(str(path))}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            factory=CleanConnection,
        )
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=CleanConnection)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if not readonly:
        _use_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: a 10k-line flush or a 100k-item recall stays in memory
        conn.execute("PRAGMA temp_store=MEMORY")
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the store to WAL. Two processes creating the same new store at the same instant both ask to
    switch, and SQLite answers one of them "locked" at once instead of waiting (waiting could deadlock): that
    one tries again, for as long as the busy timeout, by which time the other has switched it.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def read_version(db: Path) -> int:
    """The schema version of an existing store, read without writing a byte of it.

    With no `-wal` file the database file holds everything committed, so it is read as immutable and SQLite
    creates no `-wal`/`-shm`. Otherwise (or when that read fails) it is opened read-only, so a WAL is read
    too (reading past it could report a stale version).

    Raises:
        StoreRefused: a newer or corrupt schema version.
        sqlite3.Error: the file cannot be opened or read as SQLite.
    """
    if not _sidecars(db)[0].exists():
        try:
            conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error:
            conn = None
        if conn is not None:
            try:
                return stored_version(conn)
            except sqlite3.Error:
                pass
            finally:
                conn.close()
    conn = connect(db, readonly=True)
    try:
        return stored_version(conn)
    finally:
        conn.close()


def stored_version(conn: sqlite3.Connection) -> int:
    """Read the schema version before any DDL: 0 for a fresh file; refuse a corrupt or newer one."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        return 0
    raw = str(row[0]).strip()
    if not re.fullmatch(r"\d+", raw):
        raise StoreRefused(
            f"the store's schema version {raw!r} is corrupt; nothing was written — "
            "move the store aside (see `cortex store`) and Cortex will start a fresh one",
            code="corrupt_schema_version",
        )
    version = int(raw)
    if version > SCHEMA_VERSION:
        raise StoreRefused(
            f"the store was written by a newer Cortex (schema {version}, this build reads up to "
            f"{SCHEMA_VERSION}); nothing was written — {_UPGRADE_HINT}",
            code="newer_schema",
        )
    return version


def _private(path: Path) -> None:
    """The store holds what agents read and ran: its folder is 0700 and its file 0600 (SQLite gives the WAL the same).

    Only group and other bits are ever removed, so a store its owner made read-only stays read-only.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        pass  # it exists (or cannot be created: connect says why)
    for item in (path.parent, path):
        try:
            mode = item.stat().st_mode
            if mode & 0o077 and item.stat().st_uid == os.geteuid():
                os.chmod(item, mode & 0o700)
        except OSError:
            pass  # not ours to change: opening it reports any real problem


def open_store(path: Path, *, root: str, now: str) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the store forward; refuse newer or corrupt versions.

    An existing store's version is checked read-only first: the read-write open switches the journal to
    WAL, which rewrites header bytes of a store this build must refuse.

    Raises:
        StoreRefused: a newer or corrupt version, or a store SQLite cannot use (see `store_error`).
    """
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot create the store folder {path.parent} ({exc.strerror or exc.__class__.__name__}); nothing was "
            "written — make its parent writable, or point CORTEX_HOME at a folder you can write",
            code="store_folder",
            path=str(path),
        ) from exc
    _private(path)
    try:
        if path.exists():
            read_version(path)
        conn = connect(path)
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
    try:
        version = stored_version(conn)
        if version < SCHEMA_VERSION:
            _migrate(conn, root=root, now=now)
    except (sqlite3.Error, StoreRefused) as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error):
            raise store_error(exc, path) from exc
        raise
    return conn


def open_empty(*, root: str, now: str) -> sqlite3.Connection:
    """An empty store of the current schema held in memory: what a read sees where no store exists yet, so a
    one-shot read answers as an empty store would and creates nothing."""
    conn = connect(Path(":memory:"))
    _migrate(conn, root=root, now=now)
    return conn


@contextmanager
def waiting_at_most(conn: sqlite3.Connection, ms: int = 0) -> Iterator[None]:
    """Run the block with the busy timeout at `ms` (0: fail at once rather than wait on another connection), then
    put the store's own timeout back. For work that may be skipped or redone when the store is busy."""
    conn.execute(f"PRAGMA busy_timeout={int(ms)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _migrate(conn: sqlite3.Connection, *, root: str, now: str) -> None:
    """Run every migration the store lacks in one write transaction.

    Foreign keys are off while it runs: version 8 rebuilds `notes` and `memory_items`, and dropping the old
    `memory_items` with them on would cascade into every reference and anchor. A store that held rows when
    it was rebuilt is vacuumed afterwards (best effort), so the file itself shrinks.
    """
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.create_function("cortex_spool_digest", 1, spool_digest, deterministic=True)
    try:
        with transaction(conn):
            version = stored_version(conn)  # re-read under the write lock: another process may have migrated
            # Only a file that holds nothing yet is made from, or teaches, what the migrations make (`_FRESH`):
            # a file that already holds objects of its own must not pass them to the process's later stores.
            empty = version == 0 and conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None
            if not (empty and _replay_fresh(conn)):
                for script in MIGRATIONS[version:]:
                    for statement in statements(script):
                        if not _column_present(conn, statement):
                            conn.execute(statement)
                if empty:
                    _learn_fresh(conn)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (str(SCHEMA_VERSION),),
            )
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('root_path', ?)", (root,))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('created_at', ?)", (now,))
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
    if 0 < version < 11 and conn.execute("SELECT 1 FROM memory_items LIMIT 1").fetchone() is not None:
        try:
            with waiting_at_most(conn):  # never wait on a reader for this: it is only about file size
                conn.execute("VACUUM")
        except sqlite3.OperationalError:
            pass  # another connection is reading: the freed pages are reused by later writes instead


Fresh = tuple[tuple[str, ...], frozenset["SchemaObject"], tuple[tuple[str, tuple[tuple[object, ...], ...]], ...]]
_FRESH: list[Fresh] = []
"""What the migrations left in the first store this process built from nothing: the CREATE statements of its
schema objects in creation order, those objects, and the rows the migrations wrote. The next brand-new store of
the process gets them directly (a few milliseconds instead of every migration's ALTER and rebuild, which re-parse
the whole schema each time): what a process that opens many new stores (an import, a test run) pays again."""


def _learn_fresh(conn: sqlite3.Connection) -> None:
    """Remember the schema and rows the migrations just wrote into an empty store (see `_FRESH`)."""
    kinds = {str(r[1]): str(r[2]) for r in conn.execute("PRAGMA main.table_list")}
    if not kinds:
        return  # an SQLite before 3.37 cannot tell shadow tables apart: every new store runs the migrations
    made = conn.execute(
        "SELECT type, name, sql FROM main.sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
    ).fetchall()
    # SQLite makes its own tables and a virtual table's shadow tables itself: they are neither created nor filled.
    own = [(str(kind), str(name), str(sql)) for kind, name, sql in made if not _made_by_sqlite(str(name), kinds)]
    rows = (
        (name, tuple(tuple(r) for r in conn.execute(f'SELECT * FROM "{name}"')))
        for kind, name, _ in own
        if kind == "table" and kinds.get(name) == "table"
    )
    _FRESH[:] = [(tuple(sql for _, _, sql in own), schema_objects(conn), tuple(entry for entry in rows if entry[1]))]


def _made_by_sqlite(name: str, kinds: dict[str, str]) -> bool:
    """Whether SQLite makes a schema object itself: its own tables, and the shadow tables of a virtual table."""
    return name.startswith("sqlite_") or kinds.get(name) == "shadow"


def _replay_fresh(conn: sqlite3.Connection) -> bool:
    """Give an empty store the schema and rows `_learn_fresh` remembered; False (nothing changed) where none is
    remembered yet or the result would differ in any object from what the migrations made."""
    if not _FRESH:
        return False
    creates, objects, rows = _FRESH[0]
    conn.execute("SAVEPOINT fresh_schema")
    try:
        for sql in creates:
            conn.execute(sql)
        for table, values in rows:
            marks = ",".join("?" * len(values[0]))
            conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', values)
        same = schema_objects(conn) == objects
    except sqlite3.Error:
        same = False
    if not same:
        conn.execute("ROLLBACK TO fresh_schema")
    conn.execute("RELEASE fresh_schema")
    return same


_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", re.IGNORECASE)


def _column_present(conn: sqlite3.Connection, statement: str) -> bool:
    """Whether `statement` adds a column its table already has: a store whose version stamp reads older than its
    tables (set back by hand, or a copy restored over a newer one's meta) migrates again without failing on it."""
    added = _ADD_COLUMN.match(statement)
    if added is None:
        return False
    table, column = added.groups()
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


SchemaObject = tuple[str, str, str, str]
"""One row of `sqlite_master`: (type, name, table, SQL with its whitespace collapsed)."""

_PLANNER_TABLES = ("sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4")
"""What `ANALYZE` adds: statistics for the query planner, not part of a schema."""


def schema_objects(conn: sqlite3.Connection) -> frozenset[SchemaObject]:
    """Every table, index, view and trigger a database holds, as `schema_objects` compares them."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset(
        (str(kind), str(name), str(table), " ".join(str(sql or "").split()))
        for kind, name, table, sql in rows
        if name not in _PLANNER_TABLES
    )


@lru_cache(maxsize=4)
def expected_objects(version: int) -> frozenset[SchemaObject]:
    """The schema objects a store of `version` holds: what the migrations up to it create, in a store held in
    memory (every store of that version was made by exactly these statements, in this order)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.create_function("cortex_spool_digest", 1, spool_digest, deterministic=True)
        for script in MIGRATIONS[:version]:
            for statement in statements(script):
                conn.execute(statement)
        return schema_objects(conn)
    finally:
        conn.close()


def schema_differences(conn: sqlite3.Connection, version: int) -> list[str]:
    """How a database's schema differs from what this build creates at `version`: `extra trigger evil`,
    `missing index notes_scope`, `different table notes` (empty when it is exactly that schema)."""
    have = {(kind, name): row for row in schema_objects(conn) for kind, name in [row[:2]]}
    want = {(kind, name): row for row in expected_objects(version) for kind, name in [row[:2]]}
    found = [f"extra {kind} {name}" for kind, name in sorted(have.keys() - want.keys())]
    found += [f"missing {kind} {name}" for kind, name in sorted(want.keys() - have.keys())]
    found += [
        f"different {kind} {name}"
        for kind, name in sorted(have.keys() & want.keys())
        if have[kind, name] != want[kind, name]
    ]
    return found


def in_scopes(count: int = 1, alias: str = "", *, indexed: bool = True) -> str:
    """The one SQL condition "this note's or memory item's scope is one of `count` keys" (bind the key strings).

    Rows store the scope's integer id (schema 8); this matches it through the `scopes` table's unique key
    index, so callers keep binding keys and SQLite still walks the scope indexes. `alias` qualifies the
    column (`"m."`). `indexed=False` keeps SQLite off the scope index, for rows already found by rowid.
    """
    column = f"{alias}scope_id" if indexed else f"+{alias}scope_id"
    return f"{column} IN (SELECT id FROM scopes WHERE key IN ({','.join('?' * count)}))"


IN_SCOPE = in_scopes(1)


def scope_id(conn: sqlite3.Connection, key: str) -> int:
    """The integer id notes and memory items store for the scope `key`, adding it on first use.

    Called inside the write transaction that stores the row. An id `remember_scopes` read when the engine
    opened costs no statement (a flush projects thousands of rows into one scope); any other is looked up,
    and added if new, by two statements, and not remembered: the transaction adding it may still roll back.
    """
    known: dict[str, int] | None = getattr(conn, "known_scopes", None)
    if known and key in known:
        return known[key]
    conn.execute("INSERT OR IGNORE INTO scopes(key) VALUES (?)", (key,))
    return int(conn.execute("SELECT id FROM scopes WHERE key=?", (key,)).fetchone()[0])


def remember_scopes(conn: sqlite3.Connection, keys: Sequence[str]) -> None:
    """Give the engine's own scopes their ids now (adding any the store lacks) and remember them on the
    connection for `scope_id`, so writes into them cost no extra statement.

    Only outside a transaction, so every id remembered is committed (scope rows are never deleted or
    renumbered). A store that cannot take the write now (read-only, busy) is left alone: `scope_id` then
    adds the scope inside the first write that needs it.
    """
    known: dict[str, int] | None = getattr(conn, "known_scopes", None)
    if known is None or conn.in_transaction or not keys:
        return
    select = f"SELECT key, id FROM scopes WHERE key IN ({','.join('?' * len(keys))})"
    known.update((str(key), int(id_)) for key, id_ in conn.execute(select, tuple(keys)))
    missing = [key for key in keys if key not in known]
    if not missing:
        return
    try:
        with waiting_at_most(conn), transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO scopes(key) VALUES (?)", [(key,) for key in missing])
    except sqlite3.Error:
        return
    known.update((str(key), int(id_)) for key, id_ in conn.execute(select, tuple(keys)))


_DAMAGED_HINT = (
    "keep a copy of it, then salvage what it holds (`sqlite3 {path} .recover | sqlite3 recovered.db`) or move it "
    "aside (Cortex starts a fresh store)"
)


def store_error(exc: sqlite3.Error, path: Path | str) -> StoreRefused:
    """Say in one line what SQLite's failure means for the store at `path`, and what to do about it.

    Every sqlite3 error that leaves the engine passes through here (opening a store, and `Engine.__exit__`).
    """
    path = Path(path)
    folder = path.parent
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    said = " ".join(str(exc).split())
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (not primary and _busy(exc)):
        return StoreBusy(
            f"{path} is busy: another Cortex process held it for over {BUSY_TIMEOUT_MS / 1000:g} s ({said}); "
            "nothing was written — try again in a moment",
            path=str(path),
        )
    if primary == sqlite3.SQLITE_FULL:
        return StoreFull(
            f"the disk holding {path} is full ({said}); this change was not saved and what was stored before is "
            "intact — free some disk space and run the command again",
            path=str(path),
        )
    if primary == sqlite3.SQLITE_READONLY or (primary == sqlite3.SQLITE_CANTOPEN and not _writable(folder)):
        # SQLite gives the -wal and -shm files the database file's mode, so they may need the fix too.
        files = [f for f in (path, *_sidecars(path)) if f.exists() and not os.access(f, os.W_OK)]
        targets = [folder] if not _writable(folder) else files or [path]
        return StoreReadOnly(
            f"{' and '.join(map(str, targets))} {'is' if len(targets) == 1 else 'are'} read-only ({said}); this "
            "change was not saved and the store is intact — make "
            f"{'it' if len(targets) == 1 else 'them'} writable (chmod u+w {' '.join(map(str, targets))}), "
            "or run Cortex as the user who owns the store",
            path=str(path),
        )
    if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreDamaged(
            f"{path} is damaged or is not a Cortex store ({said}); the command stopped there — "
            + _DAMAGED_HINT.format(path=path),
            path=str(path),
        )
    if primary in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH):
        return StoreUnavailable(
            f"cannot open {path} ({said}); nothing was written — check that you can read and write the file "
            f"and its folder {folder}",
            path=str(path),
        )
    return StoreUnavailable(
        f"the store {path} failed ({said}); this change was not saved — check the disk, then run the command "
        "again (`cortex doctor` checks the store)",
        path=str(path),
    )


def _sidecars(path: Path) -> tuple[Path, Path]:
    """The store's WAL and shared-memory files."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def _writable(folder: Path) -> bool:
    """Whether this process may create files in `folder` (SQLite's `-wal`, `-shm` and journal live there)."""
    return os.access(folder, os.W_OK | os.X_OK)


def _busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock (not a damaged file)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a short `BEGIN IMMEDIATE` write transaction; roll back on any error (which is re-raised as is)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back whatever is still open, never masking the error that got us here.

    After SQLITE_FULL, SQLITE_IOERR or a failed COMMIT, SQLite may already have rolled the transaction back;
    a second ROLLBACK would then raise "no transaction is active" in place of the real cause.
    """
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the original error is what the caller must see; SQLite discards the transaction on close


def wal_bound() -> int:
    """The WAL size past which a flush checkpoints: `CORTEX_WAL_MAX_BYTES` (an integer >= 4096), else 4 MiB."""
    return settings.wal_max_bytes(WAL_MAX_BYTES, WAL_MIN_BYTES)


def checkpoint_if_large(conn: sqlite3.Connection) -> str | None:
    """Checkpoint the WAL when it has grown past its bound, without ever waiting for a lock.

    SQLite's automatic checkpoint copies pages back but never shrinks the `-wal` file, and it cannot finish
    while a reader holds an old snapshot. Past the bound this copies what it can (PASSIVE) and then tries to
    truncate the file (TRUNCATE) with the busy timeout set to 0, so a concurrent reader or writer makes it
    give up at once instead of blocking the hook that flushed. Returns None when the WAL is within bounds,
    else `truncated` or `busy` (retried by the next flush).
    """
    row = conn.execute("PRAGMA database_list").fetchone()
    path = row[2] if row is not None else ""
    if not path or conn.in_transaction:
        return None
    try:
        size = os.path.getsize(path + "-wal")
    except OSError:
        return None
    if size <= wal_bound():
        return None
    try:
        with waiting_at_most(conn):
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.OperationalError:
        busy = 1
    return "busy" if busy else "truncated"
