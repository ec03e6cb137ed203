"""The map's colours and marks, for every reader: the players' colours and the neutral's grey
stay apart for colour-blind readers and on a black-and-white print, the army count keeps its
contrast on every fill, each territory carries its owner's mark as the legend does, a six-player
report has no serious accessibility violation (axe-core, light, dark and printed), and the map
under each simulation is drawn as the numbers say (docs/screens/map-*.png, looked at when the
colours change: PBEM_SCREENS=docs/screens writes them there).

The colour science is here, in the standard library alone:

- sRGB to linear light and back (IEC 61966-2-1), CIE XYZ and CIELAB under D65;
- colour vision deficiency simulated with Machado, Oliveira and Fernandes (2009), "A
  physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6)
  1291-1298: their severity-1.0 matrices, applied to linear sRGB, the result clipped to [0, 1];
- the difference of two colours in CIEDE2000 (Sharma, Wu and Dalal 2005, "The CIEDE2000
  color-difference formula: implementation notes, supplementary test data, and mathematical
  observations", Color Res. Appl. 30(1); checked against their test pairs below);
- greys as a black-and-white print gives them: the luminance Y, compared in CIE L*;
- contrast as WCAG 2 defines it: (Y1 + 0.05) / (Y2 + 0.05).

The thresholds:

- MIN_DIFFERENCE: a CIEDE2000 difference of about 1 is just noticeable between two large
  patches side by side; telling apart small marks seen apart (a 34 px circle across the map, an
  11 px chip in the legend) takes many times more. 15 is the bar, in every one of the four
  visions; the palette clears it with 20.2.
- MIN_GREY_STEP: the seven fills must lie between L* 30 (a darker fill hides the black outline
  of one's own territories) and L* 83 (a lighter one melts into the continents' tints, L* 88 to
  92), so seven levels are at most 8.8 apart: every two at least 8 apart (about eight times the
  just-noticeable step in lightness) is as far as that range allows with a little slack.
- MIN_CONTRAST: 4.5:1, WCAG 2's minimum for text (the count is 14 px bold: normal text).
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import os
import re
import shutil
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import screens
from conftest import new_game, write_skeletons
from helpers import make_state
from test_publish import NOW

from pbem.club.site import publish_site
from pbem.core import fog
from pbem.core.board import board_names, load_board
from pbem.core.state import NEUTRAL, FogLevel, GameState, Options
from pbem.game import processor
from pbem.languages import i18n
from pbem.present import svgmap
from pbem.records.history import report_dir
from pbem.records.opening import read_game

MIN_DIFFERENCE = 15.0
MIN_GREY_STEP = 8.0
MIN_CONTRAST = 4.5
LIGHTEST, DARKEST = 83.5, 29.5
"""The range of the fills' L* (see MIN_GREY_STEP)."""

CHROMIUM = screens.chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): no screen test"
)
if CHROMIUM is None and os.environ.get("PBEM_REQUIRE_CHROMIUM"):
    raise RuntimeError("PBEM_REQUIRE_CHROMIUM is set but Chromium is not installed")

Matrix = tuple[tuple[float, float, float], ...]
Linear = tuple[float, float, float]
Lab = tuple[float, float, float]

VISIONS: dict[str, Matrix] = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
"""Machado et al. (2009), severity 1.0, on linear sRGB."""
GREY: Matrix = ((0.2126, 0.7152, 0.0722),) * 3
"""Every channel the luminance: a black-and-white print."""
SIMULATIONS: dict[str, Matrix] = {**VISIONS, "grey": GREY}


# --- colour science ----------------------------------------------------------------------------


def linear(colour: str) -> Linear:
    """A #rrggbb colour in linear sRGB."""

    def one(byte: int) -> float:
        c = byte / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return one(r), one(g), one(b)


def encoded(light: Linear) -> tuple[int, int, int]:
    """Linear sRGB back to bytes."""

    def one(c: float) -> int:
        c = min(max(c, 0.0), 1.0)
        return round(255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055))

    r, g, b = light
    return one(r), one(g), one(b)


def simulated(light: Linear, matrix: Matrix | None) -> Linear:
    if matrix is None:
        return light
    r, g, b = (
        min(max(sum(m * c for m, c in zip(row, light, strict=True)), 0.0), 1.0) for row in matrix
    )
    return r, g, b


def luminance(light: Linear) -> float:
    r, g, b = light
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def cielab(light: Linear) -> Lab:
    r, g, b = light
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def ciede2000(one: Lab, other: Lab) -> float:
    l1, a1, b1 = one
    l2, a2, b2 = other
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360 if c1 else 0.0
    h2 = math.degrees(math.atan2(b2, a2)) % 360 if c2 else 0.0
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    dl, dc = l2 - l1, c2 - c1
    big_dh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * c_mean
    s_h = 1 + 0.015 * c_mean * t
    rotation = -2 * math.sqrt(c_mean**7 / (c_mean**7 + 25**7))
    rotation *= math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2))))
    return math.sqrt(
        (dl / s_l) ** 2
        + (dc / s_c) ** 2
        + (big_dh / s_h) ** 2
        + rotation * (dc / s_c) * (big_dh / s_h)
    )


def contrast(one: str, other: str) -> float:
    y1, y2 = sorted((luminance(linear(one)), luminance(linear(other))))
    return (y2 + 0.05) / (y1 + 0.05)


FILLS = [fill for fill, _ in svgmap.PALETTE] + [svgmap.NEUTRAL_COLOUR[0]]
"""The seven fills: the six seats' and the neutral's."""


def closest_pair(matrix: Matrix | None) -> tuple[float, str, str]:
    seen = [cielab(simulated(linear(c), matrix)) for c in FILLS]
    return min(
        (ciede2000(seen[i], seen[j]), FILLS[i], FILLS[j])
        for i, j in itertools.combinations(range(len(FILLS)), 2)
    )


# --- the palette -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("one", "other", "expected"),
    [  # Sharma, Wu and Dalal (2005), table 1: pairs 1, 2, 7, 17, 25 and 34
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
        ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
    ],
)
def test_ciede2000_gives_the_published_differences(one: Lab, other: Lab, expected: float) -> None:
    assert round(ciede2000(one, other), 4) == expected
    assert round(ciede2000(other, one), 4) == expected


def test_the_simulations_keep_white_white_and_black_black() -> None:
    for matrix in SIMULATIONS.values():
        assert encoded(simulated((1.0, 1.0, 1.0), matrix)) == (255, 255, 255)
        assert encoded(simulated((0.0, 0.0, 0.0), matrix)) == (0, 0, 0)


@pytest.mark.parametrize("vision", [None, *VISIONS])
def test_every_two_colours_stay_apart_in_every_kind_of_colour_vision(vision: str | None) -> None:
    difference, one, other = closest_pair(VISIONS.get(vision or ""))
    assert difference >= MIN_DIFFERENCE, (vision, one, other, round(difference, 1))


def test_on_a_black_and_white_print_each_colour_is_a_grey_of_its_own() -> None:
    greys = sorted(cielab(linear(c))[0] for c in FILLS)
    assert greys[0] >= DARKEST and greys[-1] <= LIGHTEST, greys
    steps = [b - a for a, b in itertools.pairwise(greys)]
    assert min(steps) >= MIN_GREY_STEP, [round(g, 1) for g in greys]


def test_the_army_count_keeps_its_contrast_on_every_fill() -> None:
    for fill, ink in [*svgmap.PALETTE, svgmap.NEUTRAL_COLOUR]:
        assert contrast(ink, fill) >= MIN_CONTRAST, (fill, ink, round(contrast(ink, fill), 2))
        other = "#ffffff" if ink != "#ffffff" else "#1c1c1c"
        assert contrast(ink, fill) > contrast(other, fill), (fill, "the other ink reads better")
    assert contrast(svgmap.MARK_INK, "#ffffff") >= MIN_CONTRAST


def test_the_neutral_is_a_grey_and_the_players_are_not() -> None:
    _, a, b = cielab(linear(svgmap.NEUTRAL_COLOUR[0]))
    assert math.hypot(a, b) < 1
    assert all(math.hypot(*cielab(linear(fill))[1:]) > 20 for fill, _ in svgmap.PALETTE)


# --- the marks ---------------------------------------------------------------------------------


def marks_of(*names: str) -> dict[str, str]:
    return svgmap.player_marks(make_state(players=names, default=names[0]))


def test_a_mark_is_the_initial_and_players_who_share_one_add_their_seat() -> None:
    assert marks_of("alice", "bob", "carol") == {"alice": "A", "bob": "B", "carol": "C"}
    assert marks_of("bob", "alice", "Albert", "carl", "ann", "dee") == {
        "bob": "B",
        "alice": "A2",
        "Albert": "A3",
        "carl": "C",
        "ann": "A5",
        "dee": "D",
    }
    assert marks_of("ölof", "Östen", "ßig", "Sam", "કિરણ", "李雷") == {
        "ölof": "Ö1",
        "Östen": "Ö2",
        "ßig": "SS",
        "Sam": "S",
        "કિરણ": "ક",
        "李雷": "李",
    }


@pytest.mark.parametrize(
    "names",
    [
        ("a1", "a", "b", "b1", "c", "A2"),
        ("anna", "Anna_B", "ann-c", "ANN", "anne", "anni"),
        ("ab", "ba", "ß", "SS", "s", "ss1"),
    ],
)
def test_marks_always_differ_and_the_neutral_has_none(names: Sequence[str]) -> None:
    marks = marks_of(*names)
    assert len(set(marks.values())) == len(names), marks
    assert NEUTRAL not in marks


def test_the_mark_clears_the_neighbours_circles_and_names_on_every_board() -> None:
    """The mark's box (two characters wide) at the circle's top right overlaps no other
    territory's circle or name, nor leaves the map, on every board that ships."""
    height = svgmap.MARK_HEIGHT
    width = height + 7
    r = svgmap.TERRITORY_RADIUS
    for name in board_names():
        board = load_board(name)
        for code in i18n.LANGUAGES:
            lang = i18n.language(code, name)
            places = {t: board.territories[t].position for t in board.names}
            for t, (x, y) in places.items():
                cx, cy = x + svgmap.MARK_OFFSET, y - svgmap.MARK_OFFSET
                box = (cx - width / 2, cx + width / 2, cy - height / 2, cy + height / 2)
                assert box[0] >= 0 and box[1] <= board.width and box[2] >= 0, (name, t)
                for other, (ox, oy) in places.items():
                    if other == t:
                        continue
                    nx, ny = min(max(ox, box[0]), box[1]), min(max(oy, box[2]), box[3])
                    assert math.hypot(nx - ox, ny - oy) > r + 1, (name, t, other)
                    lines = svgmap._label_lines(lang.place(other))
                    half = max(i18n.display_width(line) for line in lines) * 6 / 2
                    top = oy + r + 11 - 9
                    bottom = oy + r + 11 + 3 + 11 * (len(lines) - 1)
                    apart = (
                        box[1] <= ox - half
                        or ox + half <= box[0]
                        or box[3] <= top
                        or bottom <= box[2]
                    )
                    assert apart, (name, code, t, other)


def test_under_heavy_fog_an_unknown_owner_gets_no_mark_and_the_neutral_none() -> None:
    owners = {"Alaska": ("alice", 5), "Kamchatka": ("bob", 7), "Peru": ("bob", 9)}
    state = make_state(
        owners,
        default=("carol", 2),
        players=["alice", "bob", "carol"],
        options=Options(fog=FogLevel.HEAVY),
    )
    known, hidden = fog.as_known(state, "alice")
    shapes = svgmap.map_shapes(known, "alice", (), hidden)
    by_name = {t.name: t for t in shapes["territories"]}
    assert by_name["Peru"].owner == fog.UNKNOWN and by_name["Peru"].mark == ""
    assert (by_name["Kamchatka"].mark, by_name["Alaska"].mark) == ("B", "A")
    drawn = svgmap.draw_territories([by_name["Peru"]], i18n.translations("en"))
    assert "<rect" not in drawn and ">?</text>" in drawn
    assert svgmap.NEUTRAL_COLOUR[0] in drawn
    two = make_state({"Siam": (NEUTRAL, 3)}, default="ann", players=["ann", "bo"])
    siam = next(t for t in svgmap.map_shapes(two, "ann")["territories"] if t.name == "Siam")
    assert siam.mark == "" and NEUTRAL not in svgmap.map_shapes(two, "ann")["marks"]


# --- a six-player game's reports ---------------------------------------------------------------

SIX = "bob,alice,carol,albert,dave,erin"
"""Six players, two of them with the same initial."""


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = new_game(tmp_path_factory.mktemp("six") / "six", SIX)
    for _ in range(4):
        write_skeletons(directory)
        processor.resolve_game(directory)
    return directory


def last_reports(directory: Path) -> tuple[GameState, Path, Path]:
    """The game's state, its pending player's last HTML report and the moderator's."""
    state = read_game(directory).state
    folder = report_dir(directory, state.resolution - 1)
    return state, folder / f"{state.awaiting()[0]}.html", folder / "_moderator.html"


DRAWN = re.compile(
    r'<circle data-territory="(?P<name>[^"]+)"[^>]*fill="(?P<fill>[^"]+)"[^>]*/>\s*'
    r"<text[^>]*>(?P<armies>[^<]*)</text>\s*"
    r'(?:<rect [^>]*/>\s*<text [^>]*fill="(?P<ink>[^"]+)">(?P<mark>[^<]*)</text>\s*)?'
    r"<text x"
)
LEGEND = re.compile(r'<span class="mark" aria-hidden="true">([^<]+)</span>([^<\s]+)')


def drawn_marks(svg: str) -> dict[str, tuple[str, str | None]]:
    """Each territory's fill and mark (None: no mark) as drawn."""
    return {m["name"]: (m["fill"], m["mark"]) for m in DRAWN.finditer(svg)}


def test_the_six_player_report_marks_every_territory_and_its_legend(six: Path) -> None:
    state, mine, moderator = last_reports(six)
    marks = svgmap.player_marks(state)
    seat = {p.name: p.seat + 1 for p in state.players}
    assert marks == {
        "alice": f"A{seat['alice']}",
        "albert": f"A{seat['albert']}",
        "bob": "B",
        "carol": "C",
        "dave": "D",
        "erin": "E",
    }
    colours = svgmap.player_colours(state)
    for page in (mine, moderator):
        html = page.read_text("utf-8")
        drawn = drawn_marks(html)
        assert set(drawn) == set(state.board.names), page.name
        for t, (fill, mark) in drawn.items():
            owner = state.owner(t)
            assert (fill, mark) == (colours[owner][0], marks[owner]), (page.name, t)
        legend = html.split('<div class="legend">')[1].split("</div>")[0]
        assert dict((name, mark) for mark, name in LEGEND.findall(legend)) == marks
        assert len({fill for fill, _ in drawn.values()}) == 6


def test_the_clubs_pages_draw_the_same_marks(six: Path, tmp_path: Path) -> None:
    root = tmp_path / "club"
    shutil.copytree(six, root / "six")
    out = tmp_path / "site"
    publish_site(root, out, NOW)
    [folder] = (out / "games").iterdir()
    page = (folder / "index.html").read_text("utf-8")
    state = read_game(six).state
    marks = svgmap.player_marks(state)
    legend = page.split('<div class="legend">')[1].split("</div>")[0]
    assert dict((name, mark) for mark, name in LEGEND.findall(legend)) == marks
    last = sorted((folder / "maps").glob("*.svg"))[-1]
    drawn = drawn_marks(last.read_text("utf-8"))
    assert {t: mark for t, (_, mark) in drawn.items()} == {
        t: marks[state.owner(t)] for t in state.board.names
    }


# --- in Chromium -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[screens.Browser]:
    with screens.browser(CHROMIUM) as b:
        yield b


@needs_chromium
def test_a_six_player_report_has_no_serious_accessibility_violation(
    six: Path, browser: screens.Browser
) -> None:
    script = screens.axe_script()
    if script is None:
        pytest.skip("axe-core is not installed: run 'npm ci' in tests/")
    _, mine, moderator = last_reports(six)
    for page in (mine, moderator):
        for width, dark, media in (
            (400, False, ""),
            (400, True, ""),
            (1200, False, ""),
            (1200, True, ""),
            (1200, False, "print"),
        ):
            browser.open(page, width, dark, media)
            serious = browser.serious_violations(script)
            assert serious == [], (page.name, width, dark, media, serious)


def pixel(browser: screens.Browser, x: float, y: float) -> tuple[int, int, int]:
    """The colour of the page's pixel at (x, y), from a screenshot of it alone."""
    shot = browser.page(
        "Page.captureScreenshot",
        format="png",
        clip={"x": x, "y": y, "width": 1, "height": 1, "scale": 1},
        captureBeyondViewport=True,
    )
    data = base64.b64decode(shot["data"])
    chunks, at = {}, 8
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        chunks[kind] = chunks.get(kind, b"") + data[at + 8 : at + 8 + size]
        at += 12 + size
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (width, height, depth, colour_type in (2, 6)) == (1, 1, 8, True)
    row = zlib.decompress(chunks[b"IDAT"])
    # One pixel: every PNG filter adds zeros to it (no pixel before it, no row above).
    r, g, b = row[1:4]
    return r, g, b


FILTER = """(() => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", "0"); svg.setAttribute("height", "0");
  svg.style.position = "absolute";
  svg.innerHTML = '<filter id="seen-as" color-interpolation-filters="linearRGB">'
    + '<feColorMatrix type="matrix" values="VALUES"/></filter>';
  document.body.appendChild(svg);
  document.querySelector(".mapblock").style.filter = "url(#seen-as)";
})()"""
"""Shows the map as a simulation sees it: the matrix applied in linear sRGB, as above."""


def hex_of(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def territory_spots(browser: screens.Browser) -> dict[str, list[float]]:
    """Where to look at each territory's fill: inside its circle, below-left of its count."""
    spots = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('circle[data-territory]')].map(c => {"
        " const b = c.getBoundingClientRect(), r = b.width / 2;"
        " return [c.dataset.territory, [b.left + scrollX + r - 0.45 * r,"
        " b.top + scrollY + r + 0.55 * r]]; }))"
    )
    return {str(k): list(v) for k, v in spots.items()}


@needs_chromium
def test_the_map_under_each_simulation_is_drawn_as_the_numbers_say(
    six: Path, browser: screens.Browser, tmp_path: Path
) -> None:
    """Screenshots of the six-player map as protanopes, deuteranopes and tritanopes see it and
    printed in greys (docs/screens/map-*.png), and in each the fill of one territory of every
    owner as the simulation above makes it (so the pictures show what the numbers measure)."""
    out = Path(os.environ.get("PBEM_SCREENS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    state, mine, _ = last_reports(six)
    colours = svgmap.player_colours(state)
    one_each = {state.owner(t): t for t in reversed(state.board.names)}
    assert len(one_each) == 6
    for name, matrix in (("none", None), *SIMULATIONS.items()):
        browser.open(mine, 1200)
        if matrix is not None:
            values = " ".join(" ".join(json.dumps(v) for v in (*row, 0, 0)) for row in matrix)
            browser.evaluate(FILTER.replace("VALUES", values + " 0 0 0 1 0"))
            top = browser.evaluate(
                "document.querySelector('.mapblock').getBoundingClientRect().top + scrollY"
            )
            height = browser.evaluate(
                "document.querySelector('.mapblock').getBoundingClientRect().height"
            )
            browser.screenshot(out / f"map-{name}.png", int(height) + 16, int(top) - 8)
            assert (out / f"map-{name}.png").stat().st_size > 20_000
        spots = territory_spots(browser)
        for owner, t in one_each.items():
            fill = colours[owner][0]
            seen = pixel(browser, *spots[t])
            expected = encoded(simulated(linear(fill), matrix))
            difference = ciede2000(cielab(linear(hex_of(seen))), cielab(linear(hex_of(expected))))
            assert difference < 2.5, (name, owner, t, fill, seen, expected)
