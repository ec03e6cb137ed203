"""The board as an SVG map's shapes: continents, borders, territories, ready to draw."""

from __future__ import annotations

import functools
import gettext
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.core.board import Board
from pbem.core.state import NEUTRAL, GameState
from pbem.languages import i18n
from pbem.languages.i18n import place
from pbem.terminal import printable

PALETTE: tuple[tuple[str, str], ...] = (
    ("#006fd9", "#ffffff"),  # blue          L* 47.5
    ("#c77654", "#1c1c1c"),  # terracotta    L* 57.8
    ("#0e5229", "#ffffff"),  # dark green    L* 30.1
    ("#f7c952", "#1c1c1c"),  # yellow        L* 83.0
    ("#85456e", "#ffffff"),  # plum          L* 38.5
    ("#27c6fa", "#1c1c1c"),  # sky blue      L* 74.6
)
"""Player colours by seat: (fill, ink of the army count on it).

The hues are Okabe and Ito's (Color Universal Design, 2002/2008: blue, vermilion, bluish
green, yellow, reddish purple, sky blue), their lightness and chroma moved so that every two of
the seven (these and NEUTRAL_COLOUR) stay apart for every reader:

- seen as they are and after simulating protanopia, deuteranopia and tritanopia (Machado,
  Oliveira and Fernandes 2009, "A physiologically-based model for simulation of color vision
  deficiency", IEEE TVCG 15(6), its severity-1.0 matrices applied in linear sRGB), every pair
  is at least 20 apart in CIEDE2000 (about 1 is just noticeable side by side);
- in greys (a black-and-white print: CIE L* of the luminance) each lies on its own level, the
  seven 8.4 or more apart between L* 30 and 83: dark enough to stand out from the continents'
  pale tints (L* 88 to 92), light enough for the black outline of one's own to show;
- the ink, black or white, has a contrast of 4.5:1 or more on its fill (WCAG 2).

tests/test_map_colours.py measures all three; docs/reports.md, "Colours and marks", says why.
"""
NEUTRAL_COLOUR = ("#a1a1a1", "#1c1c1c")  # grey, L* 66.2
MARK_INK = "#1c1c1c"
"""The owner's mark on the map is drawn in this ink on white, whatever the owner's colour."""
CONTINENT_TINTS = ("#efe3c6", "#f2d6cc", "#d9e4f2", "#eedcc0", "#dcead5", "#ead9ee")
"""Pale backgrounds for the continents on the map, in board order (repeated if more)."""

TERRITORY_RADIUS = 17
MARK_OFFSET = 15
"""The owner's mark is centred this far right of and above the territory's centre: on the
circle's edge, clear of the neighbours' circles and names on the boards that ship (measured
in tests/test_map_colours.py)."""
MARK_HEIGHT = 15
CONTINENT_PADDING = 31
LABEL_WIDTH = 13
"""Territory names longer than this go on two lines on the map."""


@dataclass(frozen=True)
class MapTerritory:
    """A territory's circle on the map, its army count and its name."""

    name: str
    x: int
    y: int
    r: int
    fill: str
    ink: str
    owner: str
    armies: int | None
    """None under fog where the reader does not see the armies."""
    mine: bool
    taken: bool
    label: tuple[str, ...]
    label_y: int
    mark: str = ""
    """The owner's mark (`player_marks`), drawn beside the circle: none for the neutral and
    for an owner unknown under fog."""


@dataclass(frozen=True)
class MapLine:
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str  # "border" (inside a continent), "sea" (between continents) or "wrap"


@dataclass(frozen=True)
class MapContinent:
    name: str
    points: str
    tint: str
    padding: int
    label: str
    label_x: float
    label_y: float


@dataclass(frozen=True)
class MapText:
    text: str
    x: float
    y: float
    anchor: str


def _hull(points: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The convex hull, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(set(points))
    if len(pts) <= 2:
        return pts

    def cross(o: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> int:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[int, int]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[int, int]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _label_lines(name: str) -> tuple[str, ...]:
    width = i18n.display_width
    if width(name) <= LABEL_WIDTH or " " not in name:
        return (name,)
    words = name.split(" ")
    best = min(
        range(1, len(words)),
        key=lambda k: abs(width(" ".join(words[:k])) - width(" ".join(words[k:]))),
    )
    return (" ".join(words[:best]), " ".join(words[best:]))


@functools.lru_cache(maxsize=256)
def _label_place(board: Board, continent: str, length: int) -> tuple[float, float]:
    """Where a continent's name goes: just above its territories, else below, left or right,
    the first side clear of every territory, every name and the other continents."""
    points = [board.territories[t].position for t in board.continents[continent].territories]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = length * 3.8  # half the width of the label at 13px, roughly
    pad = CONTINENT_PADDING
    candidates = [
        (cx, min(ys) - pad + 2),
        (cx, max(ys) + pad + 26),
        (min(xs) - pad - half, cy),
        (max(xs) + pad + half, cy),
    ]
    names = [
        (t.position[0], t.position[1] + TERRITORY_RADIUS + 14) for t in board.territories.values()
    ]
    others = [t.position for t in board.territories.values() if t.continent != continent]

    def distance(spot: tuple[float, float], other: tuple[float, float]) -> float:
        dx = max(abs(other[0] - spot[0]) - half, 0.0)
        dy = other[1] - spot[1] + 4
        return float((dx * dx + dy * dy) ** 0.5)

    def clearance(spot: tuple[float, float]) -> float:
        x, y = spot
        if not (half <= x <= board.width - half and 14 <= y <= board.height - 4):
            return -1.0
        near = min(distance(spot, o) for o in names + list(points))
        return min(near, min((distance(spot, o) - 25 for o in others), default=near))

    return next((c for c in candidates if clearance(c) >= 20), max(candidates, key=clearance))


def player_colours(state: GameState) -> dict[str, tuple[str, str]]:
    """Each player's (fill, ink) by seat, and the neutral's grey."""
    out = {p.name: PALETTE[p.seat % len(PALETTE)] for p in state.players}
    out[NEUTRAL] = NEUTRAL_COLOUR
    return out


def player_marks(state: GameState) -> dict[str, str]:
    """Each player's mark, the cue besides colour on the map and in its legend: the initial of
    their name in capitals, or where two or more players share one, that initial followed by
    their seat number (alice and albert in seats 1 and 3: "A1" and "A3"). Marks differ: an
    initial is a letter, never ending in a digit. The neutral has none. (The club's game page
    writes the same marks in its legend: templates/site_game.html.j2.)"""
    initials = {p.name: p.name[:1].upper() for p in state.players}
    shared = Counter(initials.values())
    return {
        p.name: initials[p.name] + (str(p.seat + 1) if shared[initials[p.name]] > 1 else "")
        for p in state.players
    }


def _wrap_lines(board: Board, a: str, b: str) -> list[MapLine]:
    """A border across the map's edge: one short line from each end out of its side."""
    (xl, yl), (xr, yr) = sorted((board.territories[a].position, board.territories[b].position))
    shifted = xr - board.width
    t = xl / (xl - shifted) if xl != shifted else 0.0
    y = yl + (yr - yl) * t
    return [
        MapLine(xl, yl, 0, round(y, 1), "wrap"),
        MapLine(xr, yr, board.width, round(y, 1), "wrap"),
    ]


def map_shapes(
    state: GameState,
    viewer: str | None,
    taken: Iterable[str] = (),
    hidden: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Everything the SVG map draws, as ready values: continents, borders, territories.
    `hidden`: under fog, the territories whose armies the viewer does not see (`state` is then
    the state as they know it, its unseen owners UNKNOWN in heavy fog, drawn as the neutral's
    colour and named "?", without a mark). `marks`: each player's mark (`player_marks`), for
    the legend."""
    board = state.board
    colours = player_colours(state)
    marks = player_marks(state)
    taken_set = set(taken)
    lang = i18n.current()
    continents, lines, edge_labels = _board_shapes(board, lang.code, lang.names)
    territories = []
    for name, t in board.territories.items():
        owner = state.owner(name)
        fill, ink = colours.get(owner, NEUTRAL_COLOUR)
        x, y = t.position
        territories.append(
            MapTerritory(
                name=name,
                x=x,
                y=y,
                r=TERRITORY_RADIUS,
                fill=fill,
                ink=ink,
                owner=owner,
                armies=None if name in hidden else state.armies(name),
                mine=viewer is not None and owner == viewer,
                taken=name in taken_set,
                label=_label_lines(lang.place(name)),
                label_y=y + TERRITORY_RADIUS + 11,
                mark=marks.get(owner, ""),
            )
        )
    return {
        "width": board.width,
        "height": board.height,
        "marks": marks,
        "continents": list(continents),
        "lines": list(lines),
        "edge_labels": list(edge_labels),
        "territories": territories,
    }


_Shapes = tuple[tuple[MapContinent, ...], tuple[MapLine, ...], tuple[MapText, ...]]


def _board_shapes(board: Board, code: str, names: i18n.Names) -> _Shapes:
    """The shapes that depend on the board and the language alone (continents, borders, the
    names at the map's edges), made once for each pair."""
    key = (board, code)
    found = _SHAPES.get(key)
    if found is None or found[0] is not names:
        found = _SHAPES[key] = (names, _make_board_shapes(board))
    return found[1]


_SHAPES: dict[tuple[Board, str], tuple[i18n.Names, _Shapes]] = {}
"""The board's shapes by board and language, with the names they were made with."""


def _make_board_shapes(board: Board) -> _Shapes:
    wrapped = {frozenset(pair) for pair in board.wraps}
    lines: list[MapLine] = []
    for a, b in board.borders():
        if frozenset((a, b)) in wrapped:
            lines += _wrap_lines(board, a, b)
            continue
        (x1, y1), (x2, y2) = board.territories[a].position, board.territories[b].position
        same = board.territories[a].continent == board.territories[b].continent
        lines.append(MapLine(x1, y1, x2, y2, "border" if same else "sea"))
    continents: list[MapContinent] = []
    for i, c in enumerate(board.continents.values()):
        points = [board.territories[t].position for t in c.territories]
        label = f"{place(c.name)} +{c.bonus}"
        x, y = _label_place(board, c.name, i18n.display_width(label))
        continents.append(
            MapContinent(
                c.name,
                " ".join(f"{px},{py}" for px, py in _hull(points)),
                CONTINENT_TINTS[i % len(CONTINENT_TINTS)],
                2 * CONTINENT_PADDING,
                label,
                x,
                y,
            )
        )
    edge_labels = []
    for pair in sorted(wrapped, key=sorted):
        a, b = sorted(pair, key=lambda n: board.territories[n].position)
        edge = [ln for ln in _wrap_lines(board, a, b)]
        edge_labels += [
            MapText(f"← {place(b)}", 4, edge[0].y2 - 22, "start"),
            MapText(f"{place(a)} →", board.width - 4, edge[1].y2 - 22, "end"),
        ]
    return tuple(continents), tuple(lines), tuple(edge_labels)


def draw_territories(
    territories: Sequence[MapTerritory], catalogue: gettext.NullTranslations
) -> str:
    """The territories' circles, army counts and names as SVG markup, in the language of
    `catalogue`: the part of the map that changes with the game and the reader, drawn here
    rather than by the template, since every page draws it for every territory. Templates
    call it as `draw_territories(map.territories)` (macros.html.j2, `svg_map`); every value
    in it is made printable and escaped as the template's own values are."""
    if len(_DRAWN) > 4096:
        _DRAWN.clear()
    out = []
    for t in territories:
        key = (t, catalogue)
        drawn = _DRAWN.get(key)
        if drawn is None:
            drawn = _DRAWN[key] = _draw_territory(t, catalogue)
        out.append(drawn)
    return "".join(out)


_DRAWN: dict[tuple[MapTerritory, object], str] = {}
"""Territories drawn, by territory and catalogue: the pages of one resolution draw most of
them alike (only the reader's own outline differs)."""


def _draw_territory(t: MapTerritory, catalogue: gettext.NullTranslations) -> str:
    from markupsafe import Markup, escape

    def text(value: str) -> str:
        return str(escape(value if value.isprintable() else printable(value, lines=True)))

    def words(message: Markup) -> str:  # a translation, taken as the templates take it
        return printable(str(message), lines=True)

    if t.armies is None:  # (under fog)
        armies = words(Markup(catalogue.gettext("armies not seen")) % {})
    else:
        armies = words(
            Markup(catalogue.ngettext("%(num)s army", "%(num)s armies", t.armies))
            % {"num": t.armies}
        )
    taken = ""
    if t.taken:
        taken = ", " + words(Markup(catalogue.gettext("taken this turn")) % {})
    out = [
        "    <g>\n"
        f"      <title>{text(' '.join(t.label))}: {text(t.owner)}, {armies}{taken}</title>\n"
    ]
    if t.taken:
        out.append(
            f'      <circle cx="{t.x}" cy="{t.y}" r="{t.r + 6}" fill="none" '
            'stroke="#1c1c1c" stroke-width="2" stroke-dasharray="4 3"/>\n'
        )
    outline = (
        ' stroke="#1c1c1c" stroke-width="3.5"' if t.mine else ' stroke="#ffffff" stroke-width="1.5"'
    )
    out.append(
        f'      <circle data-territory="{text(t.name)}" cx="{t.x}" cy="{t.y}" r="{t.r}" '
        f'fill="{text(t.fill)}"{outline}/>\n'
        f'      <text x="{t.x}" y="{t.y}" dy="0.36em" text-anchor="middle" font-size="14" '
        f'font-weight="700" fill="{text(t.ink)}">{"?" if t.armies is None else t.armies}</text>\n'
    )
    if t.mark:  # the owner's mark on white, at the circle's top right
        width = MARK_HEIGHT + 7 * (i18n.display_width(t.mark) - 1)
        x, y = t.x + MARK_OFFSET, t.y - MARK_OFFSET
        out.append(
            f'      <rect x="{x - width / 2:g}" y="{y - MARK_HEIGHT / 2:g}" width="{width:g}" '
            f'height="{MARK_HEIGHT}" rx="{MARK_HEIGHT / 2:g}" fill="#ffffff" stroke="{MARK_INK}" '
            'stroke-width="1"/>\n'
            f'      <text x="{x}" y="{y}" dy="0.36em" text-anchor="middle" font-size="12" '
            f'font-weight="700" fill="{MARK_INK}">{text(t.mark)}</text>\n'
        )
    out.append(
        f'      <text x="{t.x}" y="{t.label_y}" text-anchor="middle" font-size="10" '
        'fill="#2d2d2d" stroke="#ffffff" stroke-opacity="0.75" stroke-width="2.5" '
        'paint-order="stroke" stroke-linejoin="round">\n'
    )
    for i, part in enumerate(t.label):
        out.append(f'        <tspan x="{t.x}" dy="{0 if i == 0 else 11}">{text(part)}</tspan>\n')
    out.append("      </text>\n    </g>\n")
    return "".join(out)
