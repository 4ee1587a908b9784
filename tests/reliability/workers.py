"""Worker processes for the reliability tests: `python -m tests.reliability.workers <role>`, spec as JSON on stdin.

Each role does a fixed number of operations (never sleeps), then prints one JSON line with what it did. Anything
on stderr is a failure the test reports: a traceback, a `database is locked`, a `cortex:` error line.

Roles:
    notes     write notes through the engine (a long-lived process, like the MCP server) or the CLI (a process
              per call, in-process here so the count stays cheap); prints ids and the conflicts each write reported
    flush     flush spools `count` times, alternating worktrees; prints totals and any per-entry errors
    read      render recall / brief / state / session brief `rounds` times; prints the number of surfaces
    crash     run one flush or one note write and kill -9 itself at a chosen point (see `Tripwire`)
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from collections.abc import Callable
from contextlib import redirect_stdout


def _cli(argv: list[str]) -> dict:
    """Run the CLI in this process with `--json`; a non-zero exit is a failure of the worker."""
    from cortex_engine.adapters import cli

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = cli.main(argv)
    if code != 0:
        raise SystemExit(f"cortex {' '.join(argv[:4])} exited {code}")
    return json.loads(buffer.getvalue())


def role_notes(spec: dict) -> list[dict]:
    """Write every note of the spec, in order."""
    from cortex_engine.engine import Engine

    done = []
    engines: dict[str, Engine] = {}
    for note in spec["notes"]:
        if spec["mode"] == "engine":
            engine = engines.get(note["cwd"]) or engines.setdefault(note["cwd"], Engine(note["cwd"]))
            written = engine.note(note["kind"], note["text"], note.get("subject"))
            done.append({"marker": note["marker"], "id": written.id, "conflicts": [c.id for c in written.conflicts]})
        else:
            argv = ["-C", note["cwd"], "note", "--json", "--kind", note["kind"]]
            argv += ["--subject", note["subject"]] if note.get("subject") else []
            data = _cli([*argv, note["text"]])
            done.append({"marker": note["marker"], "id": data["id"], "conflicts": [c["id"] for c in data["conflicts"]]})
    for engine in engines.values():
        engine.close()
    return done


def role_flush(spec: dict) -> dict:
    """Flush the worktrees' spools `count` times, round robin."""
    from cortex_engine.engine import Engine

    totals = {"flushes": 0, "processed": 0, "duplicates": 0, "skipped": 0, "errors": []}
    engines: dict[str, Engine] = {}
    for n in range(spec["count"]):
        cwd = spec["cwds"][n % len(spec["cwds"])]
        if spec["mode"] == "engine":
            engine = engines.get(cwd) or engines.setdefault(cwd, Engine(cwd))
            result = engine.flush_spool()
            totals["errors"] += result.errors
            data = result.to_dict()
        else:
            data = _cli(["-C", cwd, "flush-spool", "--json"])
        totals["flushes"] += 1
        for key in ("processed", "duplicates", "skipped"):
            totals[key] += data[key]
    for engine in engines.values():
        engine.close()
    return totals


def role_read(spec: dict) -> dict:
    """Render the four asked-for surfaces `rounds` times, round robin over worktrees and topics."""
    from cortex_engine.engine import Engine

    surfaces = 0
    engines: dict[str, Engine] = {}
    for n in range(spec["rounds"]):
        cwd = spec["cwds"][n % len(spec["cwds"])]
        topic = spec["topics"][n % len(spec["topics"])]
        if spec["mode"] == "engine":
            engine = engines.get(cwd) or engines.setdefault(cwd, Engine(cwd))
            shown = [engine.recall(topic), engine.brief(topic), engine.state(), engine.session_brief()]
            assert all(isinstance(s.text, str) for s in shown)
        else:
            for argv in (["recall", topic], ["brief", topic], ["state"], ["session-brief"]):
                data = _cli(["-C", cwd, argv[0], "--json", *argv[1:]])
                assert isinstance(data["text"], str)
        surfaces += 4
    for engine in engines.values():
        engine.close()
    return {"surfaces": surfaces}


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class Tripwire:
    """A connection stand-in that logs every statement and kills the process at a chosen one.

    `decide(sql, n)` is asked before the n-th statement (1-based) runs and answers None, "before" (kill instead
    of running it) or "after" (run it, then kill: e.g. right after COMMIT, before anything else happens).
    """

    def __init__(self, conn: object, decide: Callable[[str, int], str | None]) -> None:
        self._conn = conn
        self._decide = decide
        self.log: list[str] = []

    def _run(self, method: str, sql: str, *args: object) -> object:
        self.log.append(" ".join(sql.split())[:60])
        when = self._decide(sql, len(self.log))
        if when == "before":
            _die()
        result = getattr(self._conn, method)(sql, *args)
        if when == "after":
            _die()
        return result

    def execute(self, sql: str, *args: object) -> object:
        return self._run("execute", sql, *args)

    def executemany(self, sql: str, *args: object) -> object:
        return self._run("executemany", sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def role_crash(spec: dict) -> dict:
    """One flush or note write that dies with SIGKILL at the spec's point; `{"survived": ...}` if it never hit it."""
    from cortex_engine.capture import flush as capture
    from cortex_engine.engine import Engine

    engine = Engine(spec["cwd"])
    point = spec.get("point") or {}
    seen = {"armed": point.get("armed_by") is None}

    def decide(sql: str, n: int) -> str | None:
        text = " ".join(sql.split())
        if point.get("armed_by") and text.startswith(point["armed_by"]):
            seen["armed"] = True
        if point.get("at") == n:
            return point["when"]
        if seen["armed"] and point.get("statement") and text.startswith(point["statement"]):
            return point["when"]
        return None

    wire = Tripwire(engine.conn, decide)
    engine.conn = wire  # type: ignore[assignment]
    if point.get("claim"):
        capture._claim = lambda folder: _die()  # type: ignore[assignment]
    if spec["action"] == "flush":
        result = engine.flush_spool()
        return {"survived": True, "statements": wire.log, "processed": result.processed, "errors": result.errors}
    written = engine.note(spec["kind"], spec["text"], spec.get("subject"))
    return {"survived": True, "statements": wire.log, "id": written.id}


ROLES = {"notes": role_notes, "flush": role_flush, "read": role_read, "crash": role_crash}

if __name__ == "__main__":
    result = ROLES[sys.argv[1]](json.loads(sys.stdin.read()))
    print(json.dumps(result))
