"""Property tests of the invariants the product promises: the contradiction rule, scope-keying, the budget packer
and the session brief (hypothesis, derandomized so CI sees the same examples; the counts named are the deep
profile's, the suite runs a fifth of them: see `tests.conftest.examples`).

What `render.assemble_budgeted(lead, entries, budget, hint)` guarantees, read from its code and checked here:

1. The kept lines are a prefix of the entries, never empty when there are entries (the top line is never
   dropped), and `dropped` is the number left out.
2. The budget is held on the rendered text itself: every character, the newlines between lines and the hint
   line are charged, so with more than one line kept `estimate_tokens(text) <= budget` — unless only the first
   entry is kept (the documented first-line case: lead + first line + hint, placed even when it overruns).
3. Continuation lines never change which lines are kept, and are placed in order until the first that does
   not fit.
"""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex_engine.base.tokens import estimate_tokens
from cortex_engine.memory.contradiction import Verdict, compare
from cortex_engine.query.render import Entry, assemble_budgeted, assemble_sections
from tests.conftest import Repo, examples

from ._support import add_worktree

PROPS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

VOCAB = (
    "use kafka redis postgres queue engine cache layer wire format parser spool flush the for at end of turn "
    "not no never do dont don't cannot enable disable add remove allow deny include exclude keep drop always sync "
    "async start stop show hide true false required optional only just longer currently src/api.py wal-mode "
    "caching cached caches retries retrying tests"
).split()
sentences = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=14).map(" ".join) | st.text(max_size=80)
FLIPS = {
    "enable": "disable",
    "add": "remove",
    "allow": "deny",
    "keep": "drop",
    "always": "never",
    "sync": "async",
    "start": "stop",
    "show": "hide",
    "true": "false",
    "include": "exclude",
    "required": "optional",
}


@st.composite
def note_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two note contents: independent, or the second a near copy of the first (a word flipped to its antonym, a
    negator inserted, a word dropped or added), so both verdicts and near misses are common."""
    words = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12))
    how = draw(st.sampled_from(["independent", "flip", "negate", "drop", "add"]))
    other = list(words)
    at = draw(st.integers(0, len(words)))
    if how == "independent":
        return " ".join(words), draw(sentences)
    if how == "flip":
        x, y = draw(st.sampled_from(sorted(FLIPS.items())))
        words.insert(at, x)
        other.insert(at, y)
    elif how == "negate":
        other.insert(at, draw(st.sampled_from(["not", "never", "no", "don't", "cannot"])))
    elif how == "drop" and len(other) > 1:
        other.pop(min(at, len(other) - 1))
    else:
        other.insert(at, draw(st.sampled_from(VOCAB)))
    return (" ".join(words), " ".join(other)) if draw(st.booleans()) else (" ".join(other), " ".join(words))


def test_compare_is_symmetric_and_never_self_contradicting() -> None:
    """Property (600 pairs): compare(a, b) is None iff compare(b, a) is None, with the same verdict (signal and
    trigger) when not; compare(a, a) is None. Both signals are actually exercised."""
    signals: Counter[str] = Counter()

    @settings(PROPS, max_examples=examples(600))
    @given(note_pairs())
    def check(pair: tuple[str, str]) -> None:
        a, b = pair
        forward, backward = compare(a, b), compare(b, a)
        assert (forward is None) == (backward is None)
        assert forward == backward
        assert compare(a, a) is None
        if forward is not None:
            signals[forward.signal] += 1

    check()
    assert signals["negation"] > 0 and signals["antonym"] > 0, signals


def test_compare_examples_both_ways() -> None:
    """Fixed pairs, both directions: the verdicts are equal (a regression net for the property above)."""
    pairs = [
        ("use kafka for the queue engine", "do not use kafka for the queue engine"),
        ("enable caching for the parser output", "disable caching for the parser output"),
        ("flush the spool at turn end", "never flush the spool at turn end"),
        ("use kafka for the queue engine", "use nats for the queue engine"),
    ]
    verdicts = [(compare(a, b), compare(b, a)) for a, b in pairs]
    assert verdicts == [
        (Verdict("negation", "use"),) * 2,
        (Verdict("antonym", "enable/disable"),) * 2,
        (Verdict("negation", "flush"),) * 2,
        (None, None),
    ]


def test_contests_never_cross_scopes(repo: Repo, tmp_path: Path, make_engine) -> None:
    """Property (80 programs of up to 6 note writes over three scopes of one store: two branches in two
    worktrees and a detached HEAD): every conflict a write reports is in its own scope and subject; every
    contested note has a contested partner in its own scope and subject. Contradictions across scopes do happen
    in these programs (counted), and never contest."""
    side = add_worktree(repo, tmp_path / "wt-side", "side")
    detached = tmp_path / "wt-detached"
    repo.git("worktree", "add", "-q", "--detach", str(detached))
    engines = [make_engine(repo.path), make_engine(side), make_engine(detached)]
    assert len({e.scope.key for e in engines}) == 3 and len({str(e.identity.db_path) for e in engines}) == 1
    conn = engines[0].conn
    tally: Counter[str] = Counter()
    stances = [
        "use kafka for the queue engine",
        "do not use kafka for the queue engine",
        "enable caching for the parser output",
        "disable caching for the parser output",
        "use nats for the queue engine",
    ]
    write = st.tuples(
        st.sampled_from([0, 0, 1, 2]),
        st.sampled_from(["decision"] * 4 + ["intent", "blocker"]),
        st.sampled_from([0, 0, 1]),
        st.sampled_from(stances[:2] * 3 + stances),
    )

    @settings(PROPS, max_examples=examples(80))
    @given(st.lists(write, min_size=2, max_size=6))
    def check(program: list[tuple[int, str, int, str]]) -> None:
        run = uuid.uuid4().hex[:8]
        by_subject: dict[str, set[tuple[int, str]]] = {}
        for scope, kind, subject, text in program:
            engine = engines[scope]
            written = engine.note(kind, text, f"topic {run} {subject}")
            for conflict in written.conflicts:
                row = conn.execute("SELECT scope_key, subject FROM scoped_notes WHERE id=?", (conflict.id,)).fetchone()
                assert (row["scope_key"], row["subject"]) == (engine.scope.key, written.subject)
            by_subject.setdefault(written.subject, set()).add((scope, text))
            tally["conflicts"] += len(written.conflicts)
        for writes in by_subject.values():
            scopes = {s for s, _ in writes}
            if len(scopes) > 1 and any(
                compare(a, b) for (s1, a), (s2, b) in itertools.combinations(writes, 2) if s1 != s2
            ):
                tally["cross-scope contradictions"] += 1
        rows = conn.execute(
            "SELECT id, scope_key, subject FROM scoped_notes WHERE conflict=1 AND status='active' AND subject LIKE ?",
            (f"topic {run} %",),
        ).fetchall()
        for row in rows:
            partners = conn.execute(
                "SELECT COUNT(*) FROM scoped_notes WHERE conflict=1 AND scope_key=? AND subject=? AND id != ?",
                (row["scope_key"], row["subject"], row["id"]),
            ).fetchone()[0]
            assert partners >= 1
        tally["contested"] += len(rows)

    check()
    assert tally["conflicts"] > 0 and tally["cross-scope contradictions"] > 0, tally


lines = st.text(st.sampled_from("abcdefgh xyz✓é漢"), max_size=160)


@st.composite
def packings(draw: st.DrawFn) -> tuple[str | None, list[Entry], int]:
    lead = draw(st.none() | lines)
    entries = [Entry(draw(lines), draw(st.none() | lines), f"id{i}") for i in range(draw(st.integers(0, 9)))]
    return lead, entries, draw(st.integers(1, 300))


def hint(n: int) -> str:
    return f"…{n} more match{'es' if n != 1 else ''} trimmed (raise budget or refine topic)"


def test_assemble_budgeted_guarantees() -> None:
    """Property (800 packings): the guarantees of render.assemble_budgeted's docstring, on the rendered text."""
    cases: Counter[str] = Counter()

    @settings(PROPS, max_examples=examples(800))
    @given(packings())
    def check(case: tuple[str | None, list[Entry], int]) -> None:
        lead, entries, budget = case
        done = assemble_budgeted(lead, entries, budget, hint)
        n = len(done.kept)
        # 1. The kept lines are a prefix of the entries, never empty when there are entries.
        assert done.kept == entries[:n] and (n >= 1 or not entries) and done.dropped == len(entries) - n
        # 2. The rendered text itself always fits the budget (the first line is cut, not overrun).
        assert estimate_tokens(done.text) <= budget
        first_only = "\n".join(
            [
                *([lead] if lead else []),
                *(entries[:1] and [entries[0].line]),
                *([hint(done.dropped)] if done.dropped else []),
            ]
        )
        if n <= 1 and estimate_tokens(first_only) > budget:
            # 3. A first line that alone overruns is cut with a visible ellipsis, never dropped (or only the
            #    trimmed-count hint gave way, the lead and the line fitting without it).
            bare_first = "\n".join([*([lead] if lead else []), *(entries[:1] and [entries[0].line])])
            assert "…" in done.text or estimate_tokens(bare_first) <= budget
            cases["first line over budget"] += 1
            placed = 0
        else:
            # 3'. Otherwise the text is the lead, each kept line with (for a prefix of those that have one) its
            #     continuation, then the hint when something was dropped.
            with_cont = [e for e in done.kept if e.continuation is not None]
            for placed in range(len(with_cont) + 1):
                continued = {id(e) for e in with_cont[:placed]}
                rendered = [lead] if lead else []
                for e in done.kept:
                    rendered += [e.line, e.continuation] if id(e) in continued else [e.line]
                rendered += [hint(done.dropped)] if done.dropped else []
                if done.text == "\n".join(rendered):  # type: ignore[arg-type]
                    break
            else:
                raise AssertionError("the text is not lead + kept lines + a prefix of continuations + hint")
            cases["several lines" if n >= 2 else "one line"] += 1
        # 4. Continuations never change which lines are kept.
        bare = assemble_budgeted(lead, [Entry(e.line, None, e.item_id) for e in entries], budget, hint)
        assert [e.item_id for e in bare.kept] == [e.item_id for e in done.kept] and bare.dropped == done.dropped
        cases["continuations placed"] += placed

    check()
    assert cases["several lines"] and cases["first line over budget"] and cases["continuations placed"], cases


def test_packers_keep_the_whole_text_within_budget_when_more_than_one_line_is_kept() -> None:
    """Strict: with more than the first line kept, the rendered text itself fits the budget."""
    three = assemble_budgeted(None, [Entry("aaaa"), Entry("bbbb"), Entry("cccc")], 4, hint)
    text, kept = assemble_sections(["a" * 40, "b" * 400, "c" * 40], 25)
    assert (len(three.kept), estimate_tokens(three.text)) == (3, 4)
    assert estimate_tokens(text) <= 25 and kept[0] == 0


def test_real_surfaces_stay_within_budget_past_the_first_line(repo: Repo, make_engine) -> None:
    """Strict: recall and state at every budget 20..400 over one seeded store never exceed the budget unless
    they kept a single line (recall) or a single section (state)."""
    engine = make_engine(repo.path)
    engine.start_session("host-budget")
    for i in range(6):
        engine.note("decision", f"use kafka for the queue engine number {i} " + "pad " * (i * 5), f"queue {i}")
        engine.note("blocker", f"kafka queue blocked {i} " + "pad " * 10, f"block {i}")
        engine.note("insight", f"kafka queue insight {i} " + "pad " * 7)
    over = []
    for budget in range(20, 401):
        recall = engine.recall("kafka queue", budget, book=False)
        if recall.tokens > budget and len(recall.items) > 1:
            over.append(("recall", budget, recall.tokens))
        state = engine.state(budget, book=False)
        sections = [part for part in state.text.split("\n\n") if not part.startswith("…")]
        if state.tokens > budget and len(sections) > 1:
            over.append(("state", budget, state.tokens))
    assert over == []


@st.composite
def brief_programs(draw: st.DrawFn) -> list[tuple]:
    """Note writes, supersessions (by a later write, by resolve, by replacement) and contests, long and unicode."""
    filler = st.text(st.sampled_from("abc xyz ✓ é 漢 🚀 \u05e2\u05d1 e\u0301"), max_size=400)
    ops: list[tuple] = []
    for i in range(draw(st.integers(1, 8))):
        op = draw(
            st.sampled_from(
                ["note", "note", "note", "recall", "supersede-write", "resolve-superseded", "replace", "contest"]
            )
        )
        ops.append(
            (op, i, draw(st.sampled_from(["decision", "intent", "blocker"])), draw(st.integers(0, 2)), draw(filler))
        )
    return ops


def test_session_brief_never_over_budget_never_superseded_always_marks_contested(
    repo: Repo, tmp_path: Path, make_engine
) -> None:
    """Property (80 programs, each on a fresh branch worktree, budgets 20..400 and the default 150): the session
    brief's text never exceeds its budget; it never shows a superseded note (by item, and by its marker word in the
    text), even one a recall had just made hot; every contested item it shows carries [contested]. Supersessions,
    hot superseded notes and contests do occur (counted)."""
    tally: Counter[str] = Counter()
    runs = itertools.count()

    @settings(PROPS, max_examples=examples(80))
    @given(brief_programs(), st.integers(20, 400) | st.just(150))
    def check(program: list[tuple], budget: int) -> None:
        run = f"{next(runs):03d}{uuid.uuid4().hex[:3]}"
        worktree = add_worktree(repo, tmp_path / f"wt-{run}", f"brief-{run}")
        engine = make_engine(worktree)
        engine.start_session(f"host-{run}")
        written = []
        stance: dict[str, str] = {}
        for op, i, kind, subject_n, filler in program:
            subject = f"area {run} {subject_n}"
            marker = f"mk{run}x{i}"
            if op == "note" or not written:
                said = f"use kafka for queue q{subject_n} {filler}"
                written.append(engine.note(kind, f"{marker} {said}", subject))
            elif op == "supersede-write":
                prior = written[-1]
                said = f"use redis for queue q{subject_n} {filler}"
                written.append(engine.note(prior.kind, f"{marker} {said}", prior.subject))
            elif op == "recall":  # reads reinforce: the last note turns hot before anything supersedes it
                engine.recall(written[-1].subject or "queue", book=True)
                continue
            elif op == "resolve-superseded":
                engine.resolve(written[-1].id, status="superseded")
                continue
            elif op == "replace":
                engine.resolve(written[-1].id, status="superseded", replacement=f"{marker} replaced {filler}")
                continue
            else:
                prior = written[-1]
                said = f"do not {stance[prior.id]}"
                written.append(engine.note("decision", f"{marker} {said}", prior.subject))
            stance[written[-1].id] = said
        brief = engine.session_brief(budget, book=False)
        assert estimate_tokens(brief.text) <= budget
        statuses = dict(engine.conn.execute("SELECT id, status FROM notes").fetchall())
        superseded = [n for n, s in statuses.items() if s == "superseded"]
        tally["superseded"] += len(superseded)
        tally["superseded yet warm or hot"] += engine.conn.execute(
            "SELECT COUNT(*) FROM scoped_items m JOIN notes n ON m.source_id=n.id WHERE n.status='superseded' "
            "AND m.state IN ('hot', 'warm') AND m.scope_key=?",
            (engine.scope.key,),
        ).fetchone()[0]
        shown = [item.id.removeprefix("notes:") for item in brief.items]
        assert [n for n in shown if statuses.get(n) == "superseded"] == []
        contents = [c for (c,) in engine.conn.execute("SELECT content FROM scoped_notes WHERE status='superseded'")]
        assert [c.split()[0] for c in contents if c.split()[0] in brief.text] == []
        for item in brief.items:
            if "contested" in item.labels:
                tally["contested shown"] += 1
                assert any(
                    "[contested]" in line and item.subject and item.subject in line for line in brief.text.split("\n")
                )
        tally["briefs with text"] += bool(brief.text)

    check()
    assert tally["superseded yet warm or hot"] and tally["contested shown"] and tally["briefs with text"], tally
