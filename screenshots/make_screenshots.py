"""Save the README images of the operator TUI: SVG screenshots from the snapshot tests' world, converted to PNG.

Usage: python screenshots/make_screenshots.py [--out screenshots] [--all] [--size 120x40]

The world (demo repository, frozen clock, state directories) and the steps that reach each screen are the ones
`tests/test_tui_snapshots.py` uses, so the images show exactly what the baselines lock. These images are not
baselines. PNG conversion uses the first converter found: rsvg-convert (Debian: librsvg2-bin), cairosvg (pip),
or ImageMagick's convert; without one, only the SVGs are written.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_STATES = ("overview", "memory", "search", "resolve", "activity", "never_seen")
"""The screens the README shows, in order."""


def _load_states():  # noqa: ANN202 - the snapshot test module (its world and states)
    sys.path.insert(0, str(ROOT))
    return importlib.import_module("tests.test_tui_snapshots")


async def _shoot(states, world, name: str, size: tuple[int, int], out: Path) -> Path:  # noqa: ANN001
    """Run one state headless and save its SVG."""
    app = states.state_app(world, name)
    async with app.run_test(size=size) as pilot:
        await states.STATES[name].steps(pilot)
        await states.settle(pilot)
        filename = f"{name}.svg"
        app.save_screenshot(filename=filename, path=str(out))
    return out / filename


def _printable(svg: Path) -> None:
    """Keep spaces where converters collapse them: Rich writes &#160; inside unpreserved text."""
    text = svg.read_text(encoding="utf-8")
    text = re.sub(r"<svg class=", '<svg xml:space="preserve" class=', text, count=1).replace("&#160;", " ")
    svg.write_text(text, encoding="utf-8")


def to_png(svg: Path) -> Path | None:
    """Convert one SVG to PNG with whatever converter exists; None when there is none."""
    png = svg.with_suffix(".png")
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "--zoom", "1", str(svg), "-o", str(png)], check=True)
        return png
    try:
        import cairosvg  # type: ignore[import-not-found] - optional

        cairosvg.svg2png(url=str(svg), write_to=str(png))
        return png
    except ImportError:
        pass
    magick = Path("/usr/bin/convert")
    if magick.exists():
        subprocess.run([str(magick), str(svg), str(png)], check=True)
        return png
    return None


def main() -> int:
    """Build the world, shoot each state, convert."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--all", action="store_true", help="every snapshot state, not only the README's")
    parser.add_argument("--size", default="120x40", help="terminal size, WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    states = _load_states()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = list(states.STATES) if args.all else list(README_STATES)
    with tempfile.TemporaryDirectory() as tmp:
        world = states.build_world(Path(tmp))
        with states.environment(world.env()):
            for name in names:
                svg = asyncio.run(_shoot(states, world, name, (width, height), out))
                _printable(svg)
                png = to_png(svg)
                print(f"{name}: {svg.name}" + (f", {png.name}" if png else " (no PNG converter found)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
