"""A claim knows when its meaning changed and follows the code where it went: decorators are part of a function's
span, a function moved to another file reads `[moved: …]`, a rename in place names the new name."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex_engine.engine import Engine
from cortex_engine.scope import anchors, follow, inventory, seek

from .conftest import Repo, examples
from .test_anchors import HEADS, LANGS, NAMES, note_on
from .test_cli import ok_json

CLI = """import click


@click.command()
@click.option("--count", default=1, help="how many greetings")
@click.option("--name", prompt="Your name")
def hello(count, name):
    for _ in range(count):
        click.echo(f"Hello {name}!")


@click.command()
def bye():
    click.echo("bye")
"""

# Each language that has decorators: (path, text, symbol, the text with only the target's decorator changed).
DECORATED = {
    "python": ("cli/app.py", CLI, "hello", CLI.replace("default=1", "default=3")),
    "ts": (
        "web/users.controller.ts",
        "@Controller('users')\nexport class Users {\n  @Get(':id')\n  @UseGuards(Auth)\n  findOne(id: string) {\n"
        "    return this.repo.find(id);\n  }\n\n  @Post()\n  create(body: Body) {\n    return this.repo.add(body);\n"
        "  }\n}\n",
        "Users.findOne",
        None,
    ),
    "java": (
        "src/Users.java",
        'public class Users {\n  @GetMapping(\n      value = "/users/{id}")\n  public User findOne(String id) {\n'
        '    return repo.find(id);\n  }\n\n  @PostMapping("/users")\n  public User create(User u) {\n'
        "    return repo.add(u);\n  }\n}\n",
        "Users.findOne",
        None,
    ),
    "rust": (
        "src/routes.rs",
        '#[get("/users/<id>")]\nfn find_one(id: u32) -> String {\n    format!("{}", id)\n}\n\n#[post("/users")]\n'
        "fn create_user() -> String {\n    String::new()\n}\n",
        "find_one",
        None,
    ),
}
CHANGED_DECORATOR = {
    "python": ("default=1", "default=3"),
    "ts": ("@Get(':id')", "@Get(':id/full')"),
    "java": ('"/users/{id}"', '"/v2/users/{id}"'),
    "rust": ('#[get("/users/<id>")]', '#[get("/v2/users/<id>")]'),
}
OTHER_DECORATOR = {
    "python": ("@click.command()\ndef bye", '@click.command(name="farewell")\ndef bye'),
    "ts": ("@Post()", "@Post('new')"),
    "java": ('@PostMapping("/users")', '@PostMapping("/v2/users")'),
    "rust": ('#[post("/users")]', '#[post("/v2/users")]'),
}


def labels(engine: Engine) -> list[object]:
    """The freshness label of each memory of the scope."""
    items = cast("list[dict[str, object]]", engine.validate_memory(persist=False)["items"])
    return [item["label"] for item in items]


def note(repo: Repo, engine: Engine, path: str, text: str, symbol: str) -> None:
    repo.write(path, text)
    repo.commit("code")
    engine.note("decision", f"{symbol}() in {path} is what users call", "the entry point")


@pytest.mark.parametrize("lang", sorted(DECORATED))
def test_a_change_to_a_function_s_decorators_alone_is_a_drift(repo: Repo, engine: Engine, lang: str) -> None:
    path, text, symbol, _ = DECORATED[lang]
    note(repo, engine, path, text, symbol)
    assert labels(engine) == [None]
    old, new = CHANGED_DECORATOR[lang]
    assert text.count(old) == 1
    repo.write(path, text.replace(old, new))
    repo.commit("decorator")
    assert labels(engine) == [f"drifted: {path}:{symbol} changed"]


@pytest.mark.parametrize("lang", sorted(DECORATED))
def test_another_function_s_decorator_a_new_import_or_reindenting_is_no_drift(
    repo: Repo, engine: Engine, lang: str
) -> None:
    path, text, symbol, _ = DECORATED[lang]
    note(repo, engine, path, text, symbol)
    old, new = OTHER_DECORATOR[lang]
    assert text.count(old) == 1
    changed = ("import os\n" if lang == "python" else "// header\n") + text.replace(old, new)
    repo.write(path, changed.replace(CHANGED_DECORATOR[lang][0], CHANGED_DECORATOR[lang][0].replace(" ", "  ")))
    repo.commit("elsewhere")
    assert labels(engine) == [None]


def test_inspect_memory_shows_the_decorator_line_in_the_diff(repo: Repo, engine: Engine) -> None:
    path, text, symbol, changed = DECORATED["python"]
    note(repo, engine, path, text, symbol)
    item = engine.validate_memory(persist=False)["items"][0]["id"]  # type: ignore[index]
    repo.write(path, changed or "")
    repo.commit("three greetings")
    shown = ok_json(repo.path, "inspect-memory", str(item), "--json")
    (anchor,) = shown["anchors"]
    assert anchor["status"] == "drifted"
    assert '-@click.option("--count", default=1, help="how many greetings")' in anchor["diff"]
    assert '+@click.option("--count", default=3, help="how many greetings")' in anchor["diff"]


def test_a_note_anchored_before_decorators_counted_is_re_anchored_without_a_drift(repo: Repo, engine: Engine) -> None:
    path, text, symbol, changed = DECORATED["python"]
    note(repo, engine, path, text, symbol)
    lines = text.splitlines(keepends=True)
    head = next(i for i, line in enumerate(lines, 1) if line.startswith("def hello"))
    (start, end) = engine.conn.execute("SELECT start_line, end_line FROM memory_anchors").fetchone()
    assert (start, head) == (4, 7)  # the span starts at the first decorator
    # As the format before: the header down, a bare digest.
    engine.conn.execute(
        "UPDATE memory_anchors SET start_line=?, content_hash=?", (head, anchors.span_digest(lines, head, end))
    )
    engine.conn.commit()
    repo.write(path, "import sys\n" + text)  # the lines moved; the body did not change
    assert labels(engine) == [None]
    engine.validate_memory()  # the check that persists: the anchor is stored as the current rule reads it
    row = engine.conn.execute("SELECT start_line, end_line, content_hash FROM memory_anchors").fetchone()
    assert (row[0], row[1]) == (5, end + 1)
    assert row[2] == anchors.symbol_digest(
        anchors.source_of(path, "import sys\n" + text).lines, anchors.Span(5, end + 1)
    )
    repo.write(path, "import sys\n" + (changed or ""))
    assert labels(engine) == [f"drifted: {path}:{symbol} changed"]  # from now on a decorator counts


MAIL = """def send_invoice(customer, invoice):
    body = render(invoice)
    mailer.send(customer.email, body)
    log.info("sent %s", invoice.id)


def other(x):
    return x
"""


def test_a_function_renamed_in_place_is_named_by_its_new_name(repo: Repo, engine: Engine) -> None:
    note(repo, engine, "billing/mail.py", MAIL, "send_invoice")
    repo.write("billing/mail.py", MAIL.replace("send_invoice", "deliver_invoice"))
    repo.commit("rename")
    assert labels(engine) == ["moved: billing/mail.py:send_invoice → billing/mail.py:deliver_invoice"]
    repo.write("billing/mail.py", MAIL.replace("send_invoice", "deliver_invoice").replace('"sent', '"mailed'))
    assert labels(engine) == ["stale: missing billing/mail.py:send_invoice"]  # renamed and changed: not the same


def test_a_rename_in_place_reads_the_new_name_as_a_whole_word_only() -> None:
    """The new name read as the old one where it is a whole word (the header, a recursive call), never inside a
    longer name (`walker`), so the renamed text is exactly the anchored one."""
    before = "def visit(node):\n    walker = node.walker\n    return [visit(c) for c in walker]\n"
    after = before.replace("visit", "walk") + "\n\ndef other():\n    return 1\n"
    then = anchors.source_of("m.py", before)
    digest = anchors.symbol_digest(then.lines, then.spans("visit")[0])
    found = follow.renamed_in_place(anchors.source_of("m.py", after), "m.py", "visit", 1, digest)
    assert found is not None and (found.status, found.symbol, found.start) == ("moved", "walk", 1)
    changed = after.replace("node.walker", "node.visiter")
    assert follow.renamed_in_place(anchors.source_of("m.py", changed), "m.py", "visit", 1, digest) is None


MOVED = """def reconcile(ledger, payments):
    matched = {}
    for payment in payments:
        entry = ledger.find(payment.reference)
        if entry is None:
            continue
        matched[entry.id] = payment
    return matched
"""
# The same function with two of its eight lines edited on the way (similarity 0.75), and another function that
# shares its header and first line and nothing else (similarity 0.31).
EDITED = MOVED.replace("continue", "raise Missing(payment)").replace("matched = {}", "matched: dict = {}")
UNRELATED = (
    "def reconcile(ledger, payments):\n    matched = {}\n    total = sum(payments) - ledger.balance\n"
    "    print(total)\n    return total == 0\n"
)


def test_similarity_of_an_edited_move_and_of_a_namesake() -> None:
    then = MOVED.splitlines(keepends=True)
    assert 0.7 <= follow.similarity(then, EDITED.splitlines(keepends=True)) <= 0.8
    assert 0.2 < follow.similarity(then, UNRELATED.splitlines(keepends=True)) < 0.4
    assert follow.similarity(then, then) == 1.0


@pytest.mark.parametrize(
    ("moved", "label"),
    [
        (MOVED, "moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile"),
        (
            EDITED,
            "moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile; "
            "drifted: billing/reconcile.py:reconcile changed",
        ),
        (UNRELATED, "stale: missing billing/ledger.py:reconcile"),
    ],
)
def test_a_function_moved_to_another_file_is_followed_there_while_the_old_file_stays(
    repo: Repo, engine: Engine, moved: str, label: str
) -> None:
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED + "\n\ndef keep():\n    return 1\n", "reconcile")
    repo.write("billing/ledger.py", "import os\n\n\ndef keep():\n    return 1\n")
    repo.write("billing/reconcile.py", "import os\n\n\n" + moved)
    repo.commit("split")
    assert labels(engine) == [label]
    assert labels(engine) == [label]  # a later check reuses what the first indexed, and answers the same


def test_a_function_moved_out_of_a_deleted_file_reads_moved_not_stale(repo: Repo, engine: Engine) -> None:
    note(repo, engine, "billing/ledger.py", MOVED, "reconcile")
    repo.git("rm", "-q", "billing/ledger.py")
    repo.write("billing/payments/match.py", "from x import y\n\n\n" + EDITED)  # uncommitted, untracked
    assert labels(engine) == [
        "moved: billing/ledger.py:reconcile → billing/payments/match.py:reconcile; "
        "drifted: billing/payments/match.py:reconcile changed"
    ]
    report = ok_json(repo.path, "validate-memory", "--json")
    (item,) = report["items"]
    assert item["validity"] == "code drifted"
    assert item["references"][0]["status"] == "moved"
    assert item["references"][0]["moved_to"] == "billing/payments/match.py"
    (anchor,) = item["anchors"]
    assert anchor["status"] == "moved"
    assert (anchor["path"], anchor["symbol"], anchor["drifted"]) == ("billing/payments/match.py", "reconcile", True)
    assert anchor["moved_to"] == "billing/payments/match.py:reconcile"
    (shown,) = engine.inspect_memory(str(item["id"])).anchors  # the diff of what changed on the way
    assert shown["moved_to"] == "billing/payments/match.py:reconcile"
    assert "-            continue" in cast("list[str]", shown["diff"])
    assert "+            raise Missing(payment)" in cast("list[str]", shown["diff"])


def test_a_move_is_looked_for_only_in_files_changed_since_the_note(repo: Repo, engine: Engine) -> None:
    repo.write("billing/old_copy.py", MOVED)  # the same code, in a file untouched since the note
    note(repo, engine, "billing/ledger.py", MOVED.replace("matched", "found"), "reconcile")
    repo.git("rm", "-q", "billing/ledger.py")
    repo.commit("gone")
    assert labels(engine) == ["stale: missing billing/ledger.py"]


def test_notes_of_two_commits_each_look_where_their_own_commit_s_changes_say(repo: Repo, engine: Engine) -> None:
    """Each anchor's files changed since its commit (listed for all of them by one git process): the first note's
    function moved before the second note was written, so only the first note's list holds where it went."""
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    repo.write("billing/ledger.py", "import os\n")
    repo.write("billing/reconcile.py", MOVED)
    settle = MOVED.replace("reconcile", "settle")
    note(repo, engine, "billing/settle.py", "import sys\n\n\n" + settle, "settle")
    repo.write("billing/settle.py", "import sys\n")
    repo.write("billing/settling.py", settle)
    repo.commit("settle moved too")
    assert sorted(cast("list[str]", labels(engine))) == [
        "moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile",
        "moved: billing/settle.py:settle → billing/settling.py:settle",
    ]


def test_a_hostile_file_name_a_function_moved_to_is_quoted(repo: Repo, engine: Engine) -> None:
    note(repo, engine, "billing/ledger.py", MOVED, "reconcile")
    repo.git("rm", "-q", "billing/ledger.py")
    repo.write("billing/x] [fresh.py", MOVED)
    (label,) = labels(engine)
    assert label == 'moved: billing/ledger.py:reconcile → "billing/x\\x5d \\x5bfresh.py:reconcile"'


def test_rewrite_moved_follows_a_moved_function_and_undo_takes_it_back(repo: Repo, engine: Engine) -> None:
    note(repo, engine, "billing/ledger.py", MOVED, "reconcile")
    repo.git("rm", "-q", "billing/ledger.py")
    repo.write("billing/payments.py", EDITED)
    repo.commit("moved")
    item = str(engine.validate_memory(persist=False)["items"][0]["id"])  # type: ignore[index]
    done = engine.rewrite_moved(item)
    assert done.moves == [{"from": "billing/ledger.py", "to": "billing/payments.py", "count": 1}]
    assert "reconcile() in billing/payments.py" in done.edit.new_text
    # The text follows the code; the drift on the way is still to be accepted by a re-anchor.
    assert labels(engine) == ["drifted: billing/payments.py:reconcile changed"]
    engine.reanchor(item)
    assert labels(engine) == [None]
    engine.undo()  # the re-anchor is not an undoable text change: undo takes back the rewrite
    assert "reconcile() in billing/ledger.py" in str(engine.inspect_memory(item).item["text"])


def test_reanchor_follows_a_rename_in_place_and_rewrite_moved_writes_the_new_name(repo: Repo, engine: Engine) -> None:
    note(repo, engine, "billing/mail.py", MAIL, "send_invoice")
    repo.write("billing/mail.py", MAIL.replace("send_invoice", "deliver_invoice"))
    repo.commit("rename")
    item = str(engine.validate_memory(persist=False)["items"][0]["id"])  # type: ignore[index]
    done = engine.rewrite_moved(item)
    assert done.moves == [{"from": "send_invoice", "to": "deliver_invoice", "count": 1}]
    assert "deliver_invoice() in billing/mail.py" in str(engine.inspect_memory(item).item["text"])
    assert labels(engine) == [None]
    engine.undo()
    assert labels(engine) == ["moved: billing/mail.py:send_invoice → billing/mail.py:deliver_invoice"]
    engine.reanchor(item)  # the text still names the old name; the anchor follows the code
    assert engine.conn.execute("SELECT symbol FROM memory_anchors").fetchall()[0][0] == "deliver_invoice"
    assert labels(engine) == [None]


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_a_function_moved_to_another_file_is_followed_in_every_language(repo: Repo, engine: Engine, lang: str) -> None:
    path = note_on(repo, engine, lang)
    _, target, other, _ = LANGS[lang]
    moved_to = path.replace("session.", "tokens.")
    repo.write(path, HEADS[lang] + other)
    repo.write(moved_to, HEADS[lang] + target)
    repo.commit("split")
    assert labels(engine) == [f"moved: {path}:{NAMES[lang]} → {moved_to}:{NAMES[lang]}"]


def test_a_method_moved_with_its_class_is_followed_and_a_file_without_the_class_is_not_a_candidate(
    repo: Repo, engine: Engine
) -> None:
    method = "".join("    " + line if line.strip() else line for line in MOVED.splitlines(keepends=True))
    note(repo, engine, "billing/ledger.py", "class Ledger:\n" + method, "Ledger.reconcile")
    repo.write("billing/ledger.py", "class Ledger:\n    pass\n")
    repo.write("billing/books.py", "class Ledger:\n    x = 1\n\n" + method)
    repo.write("billing/other.py", MOVED)  # a top-level `reconcile`, not `Ledger.reconcile`
    repo.commit("moved with its class")
    assert labels(engine) == ["moved: billing/ledger.py:Ledger.reconcile → billing/books.py:Ledger.reconcile"]


def test_a_long_stack_of_options_is_in_the_span_whole_and_a_change_at_its_top_is_a_drift(tmp_path: Path) -> None:
    options = "".join(f'@click.option(\n    "--opt{k}",\n    default={k},\n)\n' for k in range(60))  # 240 lines
    text = "import click\n\n\n@click.command()\n" + options + "def main(**kw):\n    return kw\n"
    (tmp_path / "cli.py").write_text(text)
    (anchor,) = anchors.find_anchors(str(tmp_path), ["cli.py"], "main() in cli.py takes every option")
    assert (anchor.start, anchor.end) == (4, 4 + 1 + 240 + 1)
    changed = anchors.source_of("cli.py", text.replace("default=0,", "default=10,"))
    assert anchors.locate(changed, "main", anchor.start, anchor.end, anchor.digest).status == "drifted"


def test_a_move_reads_only_the_changed_files_that_name_the_symbol_as_a_word(
    repo: Repo, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note on years-old code has most of the tree changed since: only a file holding the name as a word can
    define it, so the others are never read (`reconcile_all` and `unreconciled` do not name `reconcile`)."""
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    repo.write("billing/ledger.py", "import os\n")
    repo.write("billing/reconcile.py", MOVED)
    repo.write("billing/other.py", "def other():\n    return 1\n")
    repo.write("billing/near.py", "def reconcile_all():\n    return unreconciled()\n")
    repo.commit("moved")
    read: list[str] = []
    real = anchors.read_source

    def spy(root: str, rel: str) -> anchors.Source | None:
        read.append(rel)
        return real(root, rel)

    monkeypatch.setattr(anchors, "read_source", spy)
    assert labels(engine) == ["moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile"]
    assert "billing/reconcile.py" in read
    assert "billing/other.py" not in read
    assert "billing/near.py" not in read


@pytest.mark.parametrize("name", ["billing/[r]*.py", "-e.py", ":(glob)x.py"])
def test_a_committed_file_name_read_as_a_pattern_is_still_searched_literally(
    repo: Repo, engine: Engine, name: str
) -> None:
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    repo.write("billing/ledger.py", "import os\n")
    repo.write(name, MOVED)
    repo.write("billing/reconcile_notes.py", "x = 1\n")  # what the glob `billing/[r]*.py` would match instead
    repo.commit("moved")
    (item,) = cast("list[dict[str, object]]", engine.validate_memory(persist=False)["items"])
    (anchor,) = cast("list[dict[str, object]]", item["anchors"])
    assert (anchor["status"], anchor["symbol"]) == ("moved", "reconcile")  # only `name` defines it
    assert "reconcile_notes" not in str(anchor["path"])


@pytest.mark.parametrize(
    ("before", "old", "new"),
    [
        # reformatted on the way, a recursive call, the new name inside a longer one
        (
            "def visit(node):\n    walker = node.walker\n    return [visit(c) for c in walker]\n",
            "visit",
            "walk",
        ),
        # occurrences of the old name that overlap once whitespace is gone (`ab` then `aba(x)...`: `ababa(x)...`)
        ("def aba(x):\n    y = ab\n    aba(x).strip().lower().upper().title()\n", "aba", "bab"),
    ],
)
def test_the_recorded_text_rules_a_rename_out_without_scanning_and_never_a_true_one(
    before: str, old: str, new: str
) -> None:
    """With the recorded text known, a file that cannot hold it renamed is not scanned for definitions; one that
    does (whitespace changed, the name in its own body) is still found."""
    then = anchors.source_of("m.py", before)
    digest = anchors.symbol_digest(then.lines, then.spans(old)[0])
    renamed = before.replace(old, new).replace("(x):\n", "(x) :\n").replace("    ", "        ")
    after = anchors.source_of("m.py", "import os\n\n\n" + renamed + "\n\ndef other():\n    return 1\n")
    found = follow.renamed_in_place(after, "m.py", old, 1, digest, then.lines)
    assert found is not None and (found.status, found.symbol) == ("moved", new)
    gone = anchors.source_of("m.py", "import os\n\n\ndef other():\n    return ab + 1\n")
    assert follow.renamed_in_place(gone, "m.py", old, 1, digest, then.lines) is None
    assert gone._defs is None  # ruled out from the text alone: the definitions were never scanned


def test_several_edited_moves_read_their_recorded_texts_together_crlf_included(repo: Repo, engine: Engine) -> None:
    """The recorded texts of every anchor still to follow come from one `git cat-file --batch`, read as `git show`
    reads them (a CRLF file too): an edited move is recognised only by its recorded text."""
    settle = MOVED.replace("reconcile", "settle")
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    note(repo, engine, "billing/settle.py", ("import sys\n\n\n" + settle).replace("\n", "\r\n"), "settle")
    repo.write("billing/ledger.py", "import os\n")
    repo.write("billing/settle.py", "import sys\n")
    repo.write("billing/reconcile.py", EDITED)
    repo.write("billing/settling.py", EDITED.replace("reconcile", "settle"))
    repo.commit("both moved and edited")
    assert sorted(cast("list[str]", labels(engine))) == [
        "moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile; "
        "drifted: billing/reconcile.py:reconcile changed",
        "moved: billing/settle.py:settle → billing/settling.py:settle; drifted: billing/settling.py:settle changed",
    ]


def test_a_python_file_that_only_mentions_the_name_is_not_read_and_a_crlf_definition_is_found(
    repo: Repo, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Python file's definitions of the names sought are read from the lines `git grep` gives (as `short_names`
    reads a file: a `def` or `class` at a line's start), so a file that imports or calls the name is not read; a
    CRLF file and a lone CR in a comment do not cut a line short."""
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    repo.write("billing/ledger.py", "import os\n")
    repo.write("billing/reconcile.py", ("# sums\r# again\nimport sys\n\n\n" + MOVED).replace("\n", "\r\n"))
    repo.write("billing/caller.py", "from billing.reconcile import reconcile\n\nreconcile([], [])\n")
    repo.write("billing/notes.md", "reconcile is the entry point\n")
    repo.commit("moved")
    read: list[str] = []
    real = anchors.read_source

    def spy(root: str, rel: str) -> anchors.Source | None:
        read.append(rel)
        return real(root, rel)

    monkeypatch.setattr(anchors, "read_source", spy)
    assert labels(engine) == ["moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile"]
    assert "billing/reconcile.py" in read
    assert "billing/caller.py" not in read


def _as_git_show(blob: bytes, start: int, end: int) -> list[str] | None:
    """What the recorded span was read as before: the whole file decoded, universal newlines, `splitlines`."""
    text = blob.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")
    return text.splitlines(keepends=True)[start - 1 : end] if len(text) <= anchors.MAX_FILE_BYTES else None


PIECES = [b"a", b"def f():", b"\n", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xe2\x80\xa8", b"\xc2\x85", b"\x85", b"\xff"]


@given(
    st.lists(st.sampled_from(PIECES), max_size=14),
    st.integers(min_value=0, max_value=6),
    st.integers(min_value=-1, max_value=8),
)
@settings(max_examples=examples(300))
def test_a_recorded_span_is_cut_from_the_file_s_bytes_as_the_whole_file_decoded_would_be(
    parts: list[bytes], start: int, end: int
) -> None:
    """Only the span's lines are decoded when lines up to its end break at LF alone; any other line break (CR,
    U+2028, NEL, form feed...) takes the whole file's way; both give what decoding the whole file gave."""
    blob = b"".join(parts)
    assert seek._span_lines(blob, start, end) == _as_git_show(blob, start, end)


def test_a_later_check_in_the_same_process_sees_an_edit_a_new_file_and_a_deletion_where_the_symbol_went(
    repo: Repo, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer is kept with every file it read: a later check reuses it only while they are as they were."""
    monkeypatch.setattr(inventory, "RESCAN_SECONDS", 0.0)  # the files not committed yet are listed on every check
    note(repo, engine, "billing/ledger.py", "import os\n\n\n" + MOVED, "reconcile")
    repo.write("billing/ledger.py", "import os\n")
    repo.write("billing/reconcile.py", MOVED)
    repo.commit("moved")
    moved = "moved: billing/ledger.py:reconcile → billing/reconcile.py:reconcile"
    assert labels(engine) == [moved]
    assert labels(engine) == [moved]
    repo.write("billing/reconcile.py", EDITED)  # edited where it went, not committed
    assert labels(engine) == [moved + "; drifted: billing/reconcile.py:reconcile changed"]
    repo.write("billing/reconcile.py", "# put back\n" + MOVED)  # edited again: the same files are not committed
    assert labels(engine) == [moved]
    repo.write("billing/reconcile.py", "import sys\n")
    repo.write("billing/fresh.py", MOVED)  # moved again, to a file git does not track yet
    assert labels(engine) == ["moved: billing/ledger.py:reconcile → billing/fresh.py:reconcile"]
    (repo.path / "billing/fresh.py").unlink()
    assert labels(engine) == ["stale: missing billing/ledger.py:reconcile"]
