"""No module of the engine or the TUI is over 900 formatted lines: a module that long has seams to split along."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cortex_engine", "cortex_tui")
MAX_LINES = 900  # counted as `ruff format` lays the code out (one argument a line where a call wraps)


def _line_count(path: Path) -> int:
    """Lines as an editor numbers them (a last line without a newline still counts)."""
    return len(path.read_text(encoding="utf-8").splitlines())


def _offenders(root: Path, limit: int = MAX_LINES) -> list[str]:
    """`path: lines` for every `.py` file under the packages of `root` longer than `limit`, longest first."""
    sizes = [
        (path.relative_to(root).as_posix(), _line_count(path))
        for package in PACKAGES
        for path in sorted((root / package).rglob("*.py"))
    ]
    return [f"{name}: {lines}" for name, lines in sorted(sizes, key=lambda s: (-s[1], s[0])) if lines > limit]


def test_no_module_is_over_the_line_limit() -> None:
    """Every module of cortex_engine/ and cortex_tui/ has at most MAX_LINES lines; the message lists the offenders."""
    assert len(list((ROOT / "cortex_engine").rglob("*.py"))) > 30  # the walk really saw the package
    offenders = _offenders(ROOT)
    assert offenders == [], f"over {MAX_LINES} lines (split them along their seams): " + ", ".join(offenders)


def test_the_size_check_sees_a_long_module(tmp_path: Path) -> None:
    """The checker: a module over the limit is listed with its count, one at the limit is not, nor a non-.py file."""
    (tmp_path / "cortex_engine" / "deep").mkdir(parents=True)
    (tmp_path / "cortex_tui").mkdir()
    (tmp_path / "cortex_engine" / "deep" / "long.py").write_text("x = 1\n" * 701, encoding="utf-8")
    (tmp_path / "cortex_engine" / "edge.py").write_text("x = 1\n" * 699 + "x = 1", encoding="utf-8")
    (tmp_path / "cortex_tui" / "app.tcss").write_text("Screen {}\n" * 900, encoding="utf-8")
    (tmp_path / "cortex_tui" / "longer.py").write_text("x = 1\n" * 800, encoding="utf-8")
    assert _offenders(tmp_path, limit=700) == ["cortex_tui/longer.py: 800", "cortex_engine/deep/long.py: 701"]
