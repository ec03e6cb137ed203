"""The example game's reports in headless Chromium: nothing wider than a phone's screen, dark
mode followed, the map on one printed page with its heading. Skipped, saying why, on a machine
without Chromium (CI installs it: apt-get install chromium)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import screens

from pbem.records.history import report_dir
from pbem.records.opening import read_game

EXAMPLE = Path(__file__).resolve().parent.parent / "games" / "example"
CHROMIUM = screens.chromium()

if CHROMIUM is None and os.environ.get("PBEM_REQUIRE_CHROMIUM"):
    raise RuntimeError("PBEM_REQUIRE_CHROMIUM is set but Chromium is not installed")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): no screen test"
)


def reports() -> list[Path]:
    """The pending player's last report, another player's, and the moderator's."""
    game = read_game(EXAMPLE)
    folder = report_dir(EXAMPLE, game.state.resolution - 1)
    return sorted(folder.glob("*.html"))


@pytest.fixture(scope="module")
def browser() -> screens.Browser:
    with screens.browser(CHROMIUM) as b:
        yield b  # type: ignore[misc]


@pytest.mark.parametrize("width", [360, 400])
def test_nothing_is_wider_than_a_phone_screen(browser: screens.Browser, width: int) -> None:
    for path in reports():
        browser.open(path, width)
        assert browser.overflow() == (width, width), path.name


def test_dice_never_wrap_inside_a_roll(browser: screens.Browser) -> None:
    path = next(p for p in reports() if not p.name.startswith("_"))
    browser.open(path, 360)
    heights = browser.evaluate(
        "Array.from(document.querySelectorAll('td.dice')).map(td => "
        "Array.from(td.querySelectorAll('.die')).map(d => d.offsetTop))"
    )
    assert heights, "the report should show rolls"
    assert all(len(set(tops)) == 1 for tops in heights)


def test_dark_mode_follows_the_system(browser: screens.Browser) -> None:
    path = reports()[0]
    colours = []
    for dark in (False, True):
        browser.open(path, 400, dark=dark)
        colours.append(browser.evaluate("getComputedStyle(document.body).backgroundColor"))
    light, dark_colour = (sum(map(int, re.findall(r"\d+", c)[:3])) for c in colours)
    assert dark_colour < 150 < light


def test_printed_the_map_is_on_one_page_with_its_heading(
    browser: screens.Browser, tmp_path: Path
) -> None:
    path = next(p for p in reports() if not p.name.startswith("_"))
    browser.open(path, 1200, media="print")
    box = browser.evaluate(
        "(() => { const b = document.querySelector('.mapblock').getBoundingClientRect();"
        " return [b.top, b.height]; })()"
    )
    background = browser.evaluate(
        "getComputedStyle(document.querySelector('header.top')).backgroundColor"
    )
    assert background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
    assert box[1] < 1000, "the map and its heading fit one A4 page"
    pages = browser.pdf(tmp_path / "report.pdf")
    assert pages >= 2
