"""`scope/storeinfo.py`: what `cortex store` reports about a directory's store, read
without opening it, and the (device, inode) identity that tells an engine its store file was replaced.

Each test names the behaviour it holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex_engine.engine import Engine, describe_store
from cortex_engine.scope.identity import detect_scope, store_identity
from cortex_engine.scope.storeinfo import StoreInfo, file_id

from .conftest import Repo


def test_a_git_checkout_is_described_by_its_common_dir(repo: Repo, isolated_home: Path) -> None:
    """Every field of the report for a git checkout: the store's path and id, the git common dir it is keyed by,
    not degraded, not yet created, and the scope the checkout is on."""
    info = describe_store(repo.path)
    ident = store_identity(str(repo.path))
    scope = detect_scope(str(repo.path))
    common = os.path.realpath(repo.path / ".git")
    assert info == StoreInfo(
        str(ident.db_path),
        ident.store_id,
        f"git common dir {common}",
        False,
        None,
        False,
        scope.key,
        scope.label,
        info.scope_key_shown,
    )
    assert info.scope_key_shown.lower() == info.scope_key.lower()  # the same key, the paths in their real case
    assert info.derived == f"git common dir {common}"
    assert (info.degraded, info.degraded_reason, info.exists) == (False, None, False)
    assert info.scope_key.startswith("branch:") and info.scope_label == "main"
    assert Path(info.path).is_relative_to(isolated_home / ".cortex" / "projects")


def test_outside_git_the_report_says_degraded_and_why(tmp_path: Path) -> None:
    """Outside git: the working directory is the identity, `derived` quotes the reason, degraded is True."""
    plain = tmp_path / "plain"
    plain.mkdir()
    info = describe_store(plain)
    reason = store_identity(str(plain)).degraded_reason
    assert reason is not None and reason.startswith("not a git repository")
    assert info.derived == f"working directory (degraded — {reason})"
    assert (info.degraded, info.degraded_reason, info.exists) == (True, reason, False)
    assert info.scope_key == detect_scope(str(plain)).key


def test_the_report_is_the_same_from_a_subfolder_a_symlink_and_the_current_directory(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subfolder of the checkout, a symlink to it, and the default `cwd` (".") all describe the same store."""
    whole = describe_store(repo.path)
    sub = repo.write("src/pkg/mod.py").parent
    link = tmp_path / "link"
    link.symlink_to(repo.path, target_is_directory=True)
    monkeypatch.chdir(sub)
    assert describe_store() == whole
    assert describe_store(sub) == describe_store(str(link)) == whole


def test_exists_turns_true_once_an_engine_made_the_store_and_describing_creates_nothing(
    repo: Repo, make_engine: Callable[..., Engine]
) -> None:
    """Describing never creates the store (nor its folder); once an engine opened it, `exists` is True and the
    engine's own `store_info` is the same report."""
    before = describe_store(repo.path)
    assert before.exists is False
    assert not Path(before.path).parent.exists()
    engine = make_engine(repo.path)
    after = describe_store(repo.path)
    assert after.exists is True
    assert after == engine.store_info()
    assert after.path == str(engine.identity.db_path)


def test_home_places_the_store_under_it(repo: Repo, tmp_path: Path) -> None:
    """An explicit home puts the store under `<home>/projects`, whatever CORTEX_HOME says."""
    home = tmp_path / "elsewhere"
    info = describe_store(repo.path, home)
    assert Path(info.path) == store_identity(str(repo.path), home).db_path
    assert Path(info.path).is_relative_to(home / "projects")
    assert info.path != describe_store(repo.path).path


def test_to_dict_is_the_store_json_shape(repo: Repo) -> None:
    """`store --json` prints exactly the nine fields, under their names."""
    info = describe_store(repo.path)
    assert info.to_dict() == {
        "path": info.path,
        "store_id": info.store_id,
        "derived": info.derived,
        "degraded": False,
        "degraded_reason": None,
        "exists": False,
        "scope_key": info.scope_key,
        "scope_label": "main",
        "scope_key_shown": info.scope_key_shown,
    }


def test_file_id_is_the_device_and_inode_or_none(tmp_path: Path) -> None:
    """A file's (device, inode); None for a missing one; a replacement under the same name has another id."""
    path = tmp_path / "store.db"
    assert file_id(path) is None
    path.write_text("one")
    st = os.stat(path)
    first = file_id(path)
    assert first == (st.st_dev, st.st_ino)
    keep = tmp_path / "kept"
    os.rename(path, keep)  # the old inode stays alive, so the new file cannot reuse its number
    path.write_text("two")
    assert file_id(path) not in (None, first)
    assert file_id(keep) == first


def test_an_engine_stops_following_a_replaced_or_deleted_store(repo: Repo, make_engine: Callable[..., Engine]) -> None:
    """`rescope` goes on while the store file is the one the engine opened, and refuses once it was replaced."""
    engine = make_engine(repo.path)
    assert engine.rescope() is True
    db = engine.identity.db_path
    os.rename(db, db.with_name("old.db"))
    db.write_bytes(db.with_name("old.db").read_bytes())
    assert engine.rescope() is False
