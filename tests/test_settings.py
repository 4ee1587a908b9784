"""One settings module: every `CORTEX_*` variable is read in `cortex_engine/base/settings.py` and listed in the
README."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from cortex_engine.base import settings

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cortex_engine", "cortex_tui")
# A variable name standing alone: not `__CORTEX_BIN__` (a hook template placeholder) nor `_CORTEX_WORD` (a regex).
_NAME = re.compile(r"(?<![A-Za-z0-9_])CORTEX_[A-Z][A-Z0-9_]*[A-Z0-9](?!\w)")


def _sources() -> list[Path]:
    return [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]


def test_every_variable_the_package_names_is_a_documented_setting() -> None:
    """A `CORTEX_*` name anywhere in the package's source (code, help, docstrings) is one settings knows."""
    named = {m.group(0) for path in _sources() for m in _NAME.finditer(path.read_text(encoding="utf-8"))}
    assert named, "the scan found no variable at all"
    assert named <= set(settings.DOCUMENTED), sorted(named - set(settings.DOCUMENTED))


def test_no_other_module_reads_a_cortex_variable() -> None:
    """Outside settings.py no code holds a variable's name as a value: every read goes through settings."""
    holders = []
    for path in _sources():
        if path == ROOT / "cortex_engine" / "base" / "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAME.fullmatch(node.value):
                holders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert holders == []


def test_readme_settings_section_is_the_table_settings_holds() -> None:
    """The README's Settings section lists exactly the documented variables, each with its description."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(CORTEX_\w+)` \| (.+) \|$", section, re.M))
    assert rows == settings.DOCUMENTED


@pytest.mark.parametrize(
    "value,on",
    [
        ("", True),
        ("on", True),
        ("1", True),
        ("off", False),
        ("0", False),
        (" False ", False),
        ("NO", False),
        ("never", False),
        ("disabled", False),
    ],
)
def test_every_switch_reads_the_same_spellings(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    """Subagent brief, stop nudge and automatic gc share one rule for on and off."""
    for name in (settings.SUBAGENT_BRIEF, settings.STOP_NUDGE, settings.GC_AUTO):
        monkeypatch.setenv(name, value)
    assert (settings.subagent_brief(), settings.stop_nudge(), settings.gc_auto()) == (on, on, on)


@pytest.mark.parametrize("value,days", [("", 30), ("7", 7), ("0", 30), ("-3", 30), ("a week", 30), (" 12 ", 12)])
def test_retention_window_falls_back_to_its_default(monkeypatch: pytest.MonkeyPatch, value: str, days: int) -> None:
    """A window is a whole number of days ≥ 1; anything else is the default, never an error."""
    monkeypatch.setenv("CORTEX_GC_EVENT_DAYS", value)
    assert settings.retention_days("CORTEX_GC_EVENT_DAYS") == days


def test_home_is_read_when_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """CORTEX_HOME is read at each call (never cached at import), and a blank value means `~/.cortex`."""
    monkeypatch.setenv("CORTEX_HOME", str(tmp_path / "a"))
    assert settings.home() == (tmp_path / "a").resolve()
    monkeypatch.setenv("CORTEX_HOME", "  ")
    assert settings.home() == Path.home() / ".cortex"


def test_semantic_recall_is_on_wherever_the_extra_is_installed_unless_switched_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hybrid recall beats the lexical rank on every measured set, so installing the extra is the opt-in;
    `CORTEX_SEMANTIC` is a switch like the others (unset or blank: on; an OFF spelling: off)."""
    seen: dict[str | None, bool] = {}
    for value in (None, "", "1", "yes", "0", "off", "False", "typo"):
        if value is None:
            monkeypatch.delenv(settings.SEMANTIC, raising=False)
        else:
            monkeypatch.setenv(settings.SEMANTIC, value)
        seen[value] = settings.semantic()
    assert seen == {
        None: True,
        "": True,
        "1": True,
        "yes": True,
        "0": False,
        "off": False,
        "False": False,
        "typo": True,
    }


def test_the_review_policy_is_the_users_settings_file_never_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No file: `others`. The file's value, any case and spacing. An unreadable file, a file that is not a JSON
    object, or an unknown value: `all` (the strictest), with the reason. An environment variable of the old name
    changes nothing; writing keeps the file's other keys and leaves it readable by the user alone."""
    monkeypatch.setenv("CORTEX_" + "REVIEW_ARRIVALS", "none")  # the old variable, spelt so no module names it
    path = settings.settings_file()
    seen = [settings.review_policy()]
    for body in ('{"review_arrivals": " NONE "}', '{"review_arrivals": "all"}', '{"other": 1}'):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        seen.append(settings.review_policy())
    assert seen == [("others", None), ("none", None), ("all", None), ("others", None)]
    for body, why in (
        ("{not json", "is not JSON"),
        ("[1]", "does not hold a JSON object"),
        ('{"review_arrivals": "sometimes"}', 'names no known review policy (review_arrivals: "sometimes")'),
        ('{"review_arrivals": 0}', "names no known review policy (review_arrivals: 0)"),
    ):
        path.write_text(body, encoding="utf-8")
        mode, problem = settings.review_policy()
        assert (mode, problem) == ("all", f"{path} {why}")
    path.write_text('{"keep": [1, 2]}', encoding="utf-8")
    assert settings.write_review_arrivals("none") == path
    assert json.loads(path.read_text(encoding="utf-8")) == {"keep": [1, 2], "review_arrivals": "none"}
    assert path.stat().st_mode & 0o777 == 0o600
    assert settings.review_arrivals() == "none" and settings.review_arrivals(tmp_path / "elsewhere") == "others"
    with pytest.raises(ValueError):
        settings.write_review_arrivals("sometimes")
