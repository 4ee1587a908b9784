"""The stored-string rule itself: invisible characters removed, secrets redacted, JSON parameters kept JSON."""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import time
import unicodedata

import pytest

from cortex_engine.store import redact as redact_module
from cortex_engine.store.redact import MARK, RULES, CleanConnection, clean_param, clean_text, redact

from .secret_shapes import shapes


def test_every_shape_is_redacted_and_redaction_is_idempotent() -> None:
    """Each shape's secret is gone from its text, as a string or as a statement parameter (a bracketed text such
    as `[deploy key sk-ant-…]` is tried as JSON first, and a parse error must not let it through), and cleaning
    twice changes nothing."""
    leaked = [name for name, text, secret in shapes() if secret in clean_text(text) or secret in str(clean_param(text))]
    unstable = [name for name, text, _ in shapes() if clean_text(clean_text(text)) != clean_text(text)]
    assert (leaked, unstable) == ([], [])


def test_ordinary_text_is_left_alone() -> None:
    """Paths, plain commands and prose without a secret come back unchanged."""
    for text in (
        "python -m pytest tests/test_api.py -k token",
        "git@github.com:acme/app.git",
        "ssh://git@host/x",
        "see https://example.com/a?b=1",
        "use the token bucket for rate limits",
        "mysql -u root -p app",
        "branch:/home/u/p/.git:/home/u/p:main",
        "Decision: keep the parser pure",
        # the password-option table and config-file shapes leave their look-alikes alone
        "docker run -p 8080:80 nginx",
        "docker compose -p myproj up",
        "ssh-keygen -t ed25519 -N '' -f key",
        "ssh-keygen -p -f key",
        "openssl enc -kfile key.txt -in a",
        "ldapsearch -x -W -b dc=acme",
        "psql -h localhost -p 5432 app",
        "python -m http.server -p 8000",
        "mongosh --port 27017",
        "git log -p src/a.py",
        "7z x archive.7z",
        "auth: use OIDC",
        '{"auth": "use OIDC"}',
        "the default login page has a password field",
        "10:20:30:40:50 fe80::1:2:3:4",
        "src/db/pool.ts:12:5: error: x",
        "at 2026-08-02T18:05:00Z",
    ):
        assert clean_text(text) == text


def test_format_character_table_covers_unicode_category_cf() -> None:
    """Every Cf code point this Python knows is stripped (the table in redact.py is maintained by hand)."""
    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 150
    assert clean_text("a" + "".join(cf) + "b") == "ab"


def test_controls_go_and_json_parameters_stay_json() -> None:
    """ESC, BEL, CR and C1 are stripped, tab and newline kept; a JSON parameter is cleaned value by value."""
    assert clean_text("\x1b[31mred\x07\r\n\tx\x9b2J") == "red\n\tx"
    document = json.dumps({"description": "deploy \u200b--token abcdefghijklmnop", "n": 1})
    assert json.loads(clean_param(document)) == {"description": "deploy --token [REDACTED]", "n": 1}


def test_a_long_json_list_is_cleaned_like_each_of_its_strings() -> None:
    """The batched path for big string lists (file inventories) gives exactly the per-string result."""
    values = [f"src/pkg{i}/file_{i}.py" for i in range(200)] + ["conf/DB_PASS=abcdefghijkl", "x\u202ey.py", "a\x1b[2Jb"]
    assert json.loads(clean_param(json.dumps(values))) == [clean_text(v) for v in values]
    assert clean_text("conf/DB_PASS=abcdefghijkl") == "conf/DB_PASS=[REDACTED]"


def test_escape_sequences_go_whole() -> None:
    """A terminal escape sequence is removed with its parameters, not just its ESC: CSI (7-bit and C1), OSC with
    either terminator, DCS, two-byte ESC sequences; an OSC left open ends at its line; bracketed text stays."""
    cases = {
        "use \x1b[1;31mred\x1b[0m here": "use red here",
        "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ link": "docs link",
        "title\x1b]0;owned\x07 set": "title set",
        "a\x9b2Jb\x9d0;t\x9cc": "abc",
        "\x1bPq#0;2;0;0;0\x1b\\sixel": "sixel",
        "reset\x1bc and \x1b7save": "reset and save",
        "open \x1b]0;never closed\nnext line": "open \nnext line",
        "keep [31m and ]0;x as typed": "keep [31m and ]0;x as typed",
    }
    assert {text: clean_text(text) for text in cases} == cases


def test_a_json_member_is_judged_with_its_key() -> None:
    """A JSON parameter is cleaned value by value, so `"auth": "<base64>"` (Docker's config.json) and
    `"pass": "..."` are judged with their key; `"auth": "use OIDC"` stays (a subject, not a credential)."""
    document = {
        "auths": {"registry.acme.io": {"auth": "dXNlcjpodW50ZXIyaHVudGVyMg=="}},
        "pass": "hunter2hunter2",
        "auth": "use OIDC",
        "tokens": 5,
        "key": "value",
    }
    assert json.loads(clean_param(json.dumps(document))) == {
        "auths": {"registry.acme.io": {"auth": MARK}},
        "pass": MARK,
        "auth": "use OIDC",
        "tokens": 5,
        "key": "value",
    }


def test_shapes_run_together_are_each_redacted() -> None:
    """A captured command's summary is one line: shapes joined (by newline, `&&` or a space, four at a time and
    all at once) are each still redacted; a `-p` row's command running on into `-passin pass:X` or `-pw X` must
    not take `-p` + `assin` for the option's value."""
    cases = [(f"case{i:03d} {text}", secret) for i, (_, text, secret) in enumerate(shapes())]
    leaked, unstable = [], []
    for size in (4, len(cases)):
        for sep in ("\n", " && ", " "):
            for start in range(0, len(cases), size):
                chunk = cases[start : start + size]
                cleaned = clean_text(sep.join(text for text, _ in chunk))
                leaked += [text for text, secret in chunk if secret in cleaned]
                unstable += [start] if clean_text(cleaned) != cleaned else []
    assert (leaked, unstable) == ([], [])


GROWTH = 30
"""How much more CPU cleaning may spend on 10x the text: linear work is about 10x, quadratic work 100x."""


def test_cleaning_is_linear_in_the_text() -> None:
    """No rule rescans the rest of a line for every occurrence of its anchor word. Each text repeats a
    rule's anchor (with the word that lets the rule run) without ever completing a secret; 10x the text costs at
    most GROWTH x the CPU."""
    hints = " ".join(sorted({hint for rule in RULES for hint in rule.hints})) + " "
    cases = [
        ("password\n", "login a "),
        ("password\n", "machine h login u "),
        ("%\n", "smbclient -U a "),
        ("", "lftp -u a "),
        ("", "xfreerdp /u:a "),
        ("", "htpasswd -x a "),
        ("", "curl -x "),
        ("", "sqlplus -s "),
        ("", "docker login -x "),
        ("", "mysql -u a "),
        ("", hints),
    ]

    def cpu(text: str) -> float:
        best = float("inf")
        for _ in range(2):
            began = time.process_time()
            redact(text)
            best = min(best, time.process_time() - began)
        return best

    slow = {}
    for prefix, unit in cases:
        times = max(1, 3000 // len(unit))
        small, big = cpu(prefix + unit * times), cpu(prefix + unit * times * 10)
        if big > GROWTH * max(small, 1e-4):
            slow[unit.strip()[:20]] = round(big / small, 1)
    assert slow == {}


def test_a_lone_surrogate_is_shown_as_the_replacement_character_and_can_be_stored() -> None:
    """Bytes that are not UTF-8 (a branch or file name git reports raw) reach Python as lone surrogates, which no
    UTF-8 text can hold: cleaning shows each as U+FFFD, so the string can be stored instead of crashing a write."""
    import sqlite3

    cleaned = clean_text("caf\udce9 and \ud800")
    assert cleaned == "caf\ufffd and \ufffd"
    assert sqlite3.connect(":memory:").execute("SELECT ?", (cleaned,)).fetchone() == (cleaned,)


def test_a_statement_s_parameters_are_cleaned_one_by_one_whatever_was_seen_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The choke point's row cleaning (`_clean_params`, which remembers strings it has cleaned) gives every
    parameter exactly what `clean_param` gives it, with its type: over rows mixing secrets, repeats, long texts,
    equal numbers of three types (1, 1.0, True), None, bytes and a str subclass (bound as the text it holds, as
    SQLite binds any str), through more distinct strings than it keeps (so it starts afresh in between); an
    unhashable value reaches SQLite, which refuses it as before."""
    monkeypatch.setattr(redact_module, "_KEPT_PARAMETERS", 50)
    redact_module.forget()
    rng = random.Random(11)

    class Label(str):
        pass

    secrets = [text for _, text, _ in shapes()]
    bare = [secret for _, _, secret in shapes()]
    pool: list[object] = [
        *secrets,
        "main",
        "src/a.py",
        "read",
        '{"k": "v"}',
        "x" * 2000 + secrets[0],
        None,
        1,
        1.0,
        True,
        False,
        0,
        0.0,
        b"bytes",
        Label("src/a.py"),
        Label(secrets[1]),
        "",
    ]
    rows = [
        [rng.choice(pool) if rng.random() < 0.7 else f"fresh {n} {k}" for k in range(rng.randrange(1, 9))]
        for n in range(400)
    ]
    for row in rows:
        got = redact_module._clean_params(tuple(row))
        expected = [clean_param(v) for v in row]
        assert [(_bound_as(v), v) for v in got] == [(_bound_as(v), v) for v in expected], row
    assert 0 < len(redact_module._CLEANED) <= 51
    stored = " ".join(str(v) for row in rows for v in redact_module._clean_params(row))
    assert not [secret for secret in bare if secret in stored]
    conn = sqlite3.connect(":memory:", factory=CleanConnection)
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT ?", (["a", "list"],))


def _bound_as(value: object) -> type:
    """The type SQLite binds a parameter as (no adapter is registered: a str subclass is text)."""
    return str if isinstance(value, str) else type(value)


def test_an_id_this_store_makes_is_plain_and_a_uuid_under_an_author_s_word_is_not() -> None:
    """The choke point keeps a string its one `_PLAIN` match accepts without scanning it. For the ids the store
    makes (a UUID alone or under table and episode-kind names) that must change nothing the scan would have done:
    over every prefix the shape allows and UUIDs holding each hint a UUID can spell, the scan leaves them alone.
    A UUID under a word that names a secret (`token:`) is redacted by the scan, so the shape must not take it."""
    rng = random.Random(5)
    tables, kinds = (
        ("", "command_runs:", "episodes:", "notes:"),
        ("", "command_failure:", "test_cycle:", "session_summary:", "subagent_conclusion:"),
    )
    spelled = sorted(h for h in redact_module._HINTS if set(h) <= set("0123456789abcdef-"))
    assert spelled  # the hints a UUID can hold (`eaaa`, …): each is planted below
    checked = 0
    for table in tables:
        for kind in kinds:
            for n in range(40 + len(spelled)):
                hexes = f"{rng.getrandbits(128):032x}"
                if n < len(spelled):
                    at = rng.randrange(0, 32 - len(spelled[n].replace("-", "")) + 1)
                    hexes = (hexes[:at] + spelled[n].replace("-", "") + hexes[at:])[:32]
                uuid = f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"
                text = table + kind + uuid
                assert redact_module._PLAIN.fullmatch(text), text
                assert redact_module._redact(redact_module.strip_invisible(text)) == text
                checked += 1
    assert checked == len(tables) * len(kinds) * (40 + len(spelled))
    uuid = "032ae7d5-bb8b-44c7-af9b-d1e6e131e551"
    for word in ("token", "password", "secret", "api_key", "client_secret", "episodes:access_token"):
        assert clean_text(f"{word}:{uuid}") == f"{word}:{MARK}" and not redact_module._PLAIN.fullmatch(f"{word}:{uuid}")


def test_provider_families_leave_their_look_alikes_alone() -> None:
    """The family shapes (Doppler, Discord, a bare AWS secret beside its words, Mailgun, Databricks, Twilio) leave
    ordinary text alone: git SHAs (even beside the words), UUIDs, dotted names, paths and version strings."""
    sha = "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    for text in (
        f"commit {sha} rotated the aws secret",
        f"aws secret access key docs moved in {sha}",
        "the aws secret lives in /home/ci/.aws/credentials/default/profile",
        "AWS secret access key: see the vault, not this file",
        "request 0f8fad5b-d9cb-469f-a165-70867728950e finished",
        "MTAwMDAw.docs.python.org/3/library/re.html",
        "com.example.android.application.MainActivityViewModelFactory",
        "Node.module.exports_and_requirements_of_modules_here",
        "dp.st.dev is the doppler environment naming",
        "key-value stores such as redis",
        "dapi is the Databricks API prefix",
        "ACCEPTANCE criteria: SKIP the flaky test",
        "src/accounts/ACL/Skeleton.ts",
    ):
        assert clean_text(text) == text
