"""Reports in headless Chromium: screenshots at phone and desktop widths, in dark mode and as
printed, and the measurement that nothing is wider than the screen.

Chromium is driven over its DevTools pipe (--remote-debugging-pipe: JSON messages ended by a
NUL byte on file descriptors 3 and 4), so no package beyond the standard library is needed.

Usage: python tests/screens.py [GAME_DIRECTORY] [OUT_FOLDER]
  (default: games/example and docs/screens) writes report-400.png, report-1200.png,
  report-dark.png and report-print.png from the last report of the pending player.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium on this machine (PBEM_CHROMIUM, or chromium / chromium-browser on PATH)."""
    named = os.environ.get("PBEM_CHROMIUM")
    if named:
        return named
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _wire(commands: int, answers: int) -> None:
    """In the browser's process: its commands come on fd 3, its answers go out on fd 4."""
    os.dup2(commands, 3)
    os.dup2(answers, 4)


class Browser:
    """One headless Chromium and one page in it, spoken to over the DevTools pipe."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4.
        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=functools.partial(_wire, to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        """What the browser told without being asked (console messages, requests), in order."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable", session=True)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if "method" in answer and "id" not in answer:
                self.events.append(answer)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return dict(answer.get("result", {}))

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def page(self, call: str, **params: Any) -> dict[str, Any]:
        return self.call(call, session=True, **params)

    def open(self, path: Path, width: int, dark: bool = False, media: str = "") -> None:
        """Show `path` at `width` CSS pixels, in dark mode or a media type ('print')."""
        self.page(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=width < 600,
        )
        self.page(
            "Emulation.setEmulatedMedia",
            media=media,
            features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}],
        )
        self.page("Page.navigate", url=path.resolve().as_uri())
        while self.evaluate("document.readyState") != "complete":
            pass

    def evaluate(self, expression: str) -> Any:
        return self.page("Runtime.evaluate", expression=expression, returnByValue=True)[
            "result"
        ].get("value")

    def serious_violations(self, axe: str) -> list[list[Any]]:
        """What axe-core (its script, `axe_script`) finds serious or critical on the page open:
        [rule, impact, how many elements]."""
        self.evaluate(axe)
        found = self.page(
            "Runtime.evaluate",
            expression="axe.run(document, {resultTypes: ['violations']})"
            ".then(r => r.violations.map(v => [v.id, v.impact, v.nodes.length]))",
            awaitPromise=True,
            returnByValue=True,
        )["result"]["value"]
        return [v for v in found if v[1] in ("serious", "critical")]

    def overflow(self) -> tuple[int, int]:
        """(the page's scroll width, its width): equal when nothing is wider than the screen."""
        width = self.evaluate("document.documentElement.scrollWidth")
        client = self.evaluate("document.documentElement.clientWidth")
        return int(width), int(client)

    def screenshot(self, out: Path, height: int | None = None, top: int = 0) -> None:
        """The whole page (or `height` pixels of it from `top`) as a PNG."""
        full = int(self.evaluate("document.documentElement.scrollHeight")) - top
        width = int(self.evaluate("document.documentElement.scrollWidth"))
        clip = {"x": 0, "y": top, "width": width, "height": min(full, height or full), "scale": 1}
        shot = self.page(
            "Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True
        )
        out.write_bytes(base64.b64decode(shot["data"]))

    def pdf(self, out: Path) -> int:
        """The page printed to an A4 PDF; returns its number of pages."""
        printed = self.page("Page.printToPDF", paperWidth=8.27, paperHeight=11.69)
        data = base64.b64decode(printed["data"])
        out.write_bytes(data)
        return data.count(b"/Type /Page") - data.count(b"/Type /Pages")

    def close(self) -> None:
        with suppress(RuntimeError):
            self.call("Browser.close")
        os.close(self._to_browser)
        os.close(self._from_browser)
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
"""The accessibility checker, installed by `npm ci --prefix tests` (tests/package.json)."""


def axe_script() -> str | None:
    """axe-core's script, or None where it is not installed (a test then skips, but where
    PBEM_REQUIRE_CHROMIUM is set, as in CI, where it must run: there a missing one fails)."""
    if AXE.is_file():
        return AXE.read_text("utf-8")
    if os.environ.get("PBEM_REQUIRE_CHROMIUM"):
        raise AssertionError(f"{AXE} is missing: run 'npm ci' in tests/")
    return None


@contextmanager
def browser(executable: str | None = None) -> Iterator[Browser]:
    """A fresh headless Chromium with a throwaway profile."""
    found = executable or chromium()
    if found is None:
        raise RuntimeError("no Chromium found: install it (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="pbem-chromium-") as profile:
        b = Browser(found, Path(profile))
        try:
            yield b
        finally:
            b.close()


def pending_report(directory: Path) -> Path:
    """The last HTML report of the player whose turn is pending (the example's alice, etc.)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pbem.records.history import report_dir
    from pbem.records.opening import read_game

    game = read_game(directory)
    player = game.state.awaiting()[0]
    return report_dir(directory, game.state.resolution - 1) / f"{player}.html"


def make_screenshots(directory: Path, out: Path) -> list[Path]:
    """The four screenshots of the README, from `directory`'s pending player's last report."""
    report = pending_report(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with browser() as b:
        for name, width, dark, media, height in (
            ("report-400.png", 400, False, "", 2400),
            ("report-1200.png", 1200, False, "", 1800),
            ("report-dark.png", 400, True, "", 2400),
        ):
            b.open(report, width, dark, media)
            b.screenshot(out / name, height)
            written.append(out / name)
        b.open(report, 1200)
        pdf = Path(tempfile.mkdtemp(prefix="pbem-print-")) / "report.pdf"
        b.pdf(pdf)
    pages = shutil.which("pdftoppm")
    if pages:
        subprocess.run(
            [
                pages,
                "-png",
                "-r",
                "60",
                "-f",
                "2",
                "-l",
                "2",
                "-singlefile",
                str(pdf),
                str(out / "report-print"),
            ],
            check=True,
        )
        written.append(out / "report-print.png")
    return written


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    game = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "games" / "example"
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "docs" / "screens"
    for path in make_screenshots(game, folder):
        print(path)
