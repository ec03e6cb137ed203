"""Checking a fog game's dice from a player's view file (docs/fog.md): each battle the player
was told of, by its key, its path to the commitment shown before the turn, and its dice; once
the game is over (or for the moderator), the resolution's key, which gives every battle key and
the commitment itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.core import dice, fog
from pbem.core.board import Board, board_of
from pbem.errors import BoardError, PbemError
from pbem.languages.i18n import _, n_, place
from pbem.terminal import quoted


class FogVerifyError(PbemError):
    """A fog game's dice section that cannot be read (missing, crafted, of another board)."""


def is_fogged(data: Mapping[str, Any]) -> bool:
    """Whether a view file's dice section is a fog game's (it lists battles)."""
    section = data.get("dice")
    return isinstance(section, Mapping) and "battles" in section


def _hex(value: object, what: str, size: int = 32) -> bytes:
    if not isinstance(value, str):
        raise FogVerifyError(f"the view file's {what} is not hexadecimal text")
    try:
        out = bytes.fromhex(value)
    except ValueError:
        raise FogVerifyError(
            f"the view file's {what} is not hexadecimal ({quoted(value, 80)})"
        ) from None
    if len(out) != size:
        raise FogVerifyError(f"the view file's {what} is not {size} bytes")
    return out


def _board(data: Mapping[str, Any]) -> Board:
    name = data.get("board", "classic")
    own = data.get("board_file")
    try:
        return board_of(str(name), own if isinstance(own, str) else None, "the view file's board")
    except (BoardError, ValueError) as err:
        raise FogVerifyError(f"the view file's board cannot be read: {err}") from None


def _rolls(value: object) -> tuple[fog.Roll, ...]:
    if not isinstance(value, list) or len(value) > 100_000:
        raise FogVerifyError("the view file's rolls of a battle are not a list of rolls")
    out = []
    for r in value:
        if not isinstance(r, Mapping):
            raise FogVerifyError("a roll of the view file is not attacker and defender dice")
        a, d = r.get("attacker"), r.get("defender")
        if not (
            isinstance(a, list)
            and isinstance(d, list)
            and 1 <= len(a) <= 3
            and 1 <= len(d) <= 2
            and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 6 for x in a + d)
        ):
            raise FogVerifyError("a roll of the view file is not attacker and defender dice")
        out.append((tuple(a), tuple(d)))
    return tuple(out)


def _orders(section: Mapping[str, Any]) -> tuple[bytes | None, bytes | None]:
    """The digest D of the order files the dice come from, and the salt of a resolution
    played again (both None when the resolution resolved none)."""
    files = section.get("orders")
    if files is None:
        return None, None
    if not isinstance(files, list) or not 1 <= len(files) <= 6:
        raise FogVerifyError("the view file's order files are not listed")
    digests = [
        _hex(f.get("digest") if isinstance(f, Mapping) else None, "order digest") for f in files
    ]
    again = section.get("again")
    return dice.orders_digest(digests), _hex(again, "salt") if again is not None else None


def previous_line(data: Mapping[str, Any], before: object) -> tuple[str, bool]:
    """Whether this report's battle commitment is the one the report before it gave for the
    next turn: the line that says so, and the verdict."""
    section = before.get("dice") if isinstance(before, Mapping) else None
    if not isinstance(section, Mapping) or "next_battle_root" not in section:
        raise FogVerifyError(
            "the --previous view file gives no commitment for the next turn: give the view "
            "file of the report before this one, of the same game"
        )
    if "battle_root" not in data["dice"]:
        raise FogVerifyError("this report rolled no battle: there is no commitment to compare")
    given = _hex(data["dice"].get("battle_root"), "battle commitment")
    promised = _hex(section["next_battle_root"], "next battle commitment of --previous")
    if given == promised:
        return _("battle commitment OK: the report before this turn gave it"), True
    return _(
        "battle commitment WRONG: the report before this turn gave %(promised)s, this one "
        "%(given)s: these battle keys are not the ones committed to before the orders",
        promised=promised.hex(),
        given=given.hex(),
    ), False


def _short_roll(text: object) -> fog.Roll:
    """A roll written short, "653/42"."""
    if not isinstance(text, str) or text.count("/") != 1:
        raise FogVerifyError("a roll of the game's battles is not written as 653/42")
    a, d = text.split("/")
    if not (1 <= len(a) <= 3 and 1 <= len(d) <= 2 and all(c in "123456" for c in a + d)):
        raise FogVerifyError("a roll of the game's battles is not written as 653/42")
    return tuple(map(int, a)), tuple(map(int, d))


def _whole_game(section: Mapping[str, Any], key: bytes) -> tuple[str, bool]:
    """Every battle of a finished fog game, from the last resolution's key (the chain gives
    every earlier one): the line that says how it went, and whether every die matches."""
    last = section.get("resolution")
    entries = section["game"]
    first = section.get("game_from", 1)  # (a view file lists the latest resolutions' only)
    if not isinstance(last, int) or isinstance(last, bool) or not isinstance(entries, list):
        raise FogVerifyError("the view file's battles of the game are not listed")
    if not isinstance(first, int) or isinstance(first, bool) or not 1 <= first <= last:
        raise FogVerifyError("the view file's first resolution of the game's battles is wrong")
    battles = rolls = 0
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise FogVerifyError("the view file's battles of the game are not listed")
        r = entry.get("resolution")
        if not isinstance(r, int) or isinstance(r, bool) or not first <= r <= last:
            raise FogVerifyError("a resolution of the game's battles is out of the game")
        own = dice.hash_back(key, last - r)  # k[r+1], from the last key k[last+1]
        digest = _hex(entry.get("orders_digest"), "orders digest")
        again = entry.get("again")
        salt = _hex(again, "salt") if again is not None else None
        listed = entry.get("battles")
        if not isinstance(listed, list):
            raise FogVerifyError("the view file's battles of the game are not listed")
        for b in listed:
            name = b.get("label") if isinstance(b, Mapping) else None
            played = b.get("rolls") if isinstance(b, Mapping) else None
            if not isinstance(name, str) or not isinstance(played, list):
                raise FogVerifyError("a battle of the game has no label or no rolls")
            found = tuple(_short_roll(x) for x in played)
            keyed = fog.battle_dice_key(fog.battle_key(own, name), digest, salt)
            wrong = dice.check_rolls(keyed, found)
            if wrong is not None:
                return _(
                    "the game's battle %(battle)s of resolution %(resolution)s: roll %(number)s "
                    "does NOT match its key",
                    battle=battle_told(name),
                    resolution=r,
                    number=wrong + 1,
                ), False
            battles += 1
            rolls += len(found)
    if first > 1:
        return _(
            "every battle of resolutions %(first)s to %(last)s OK: %(battles)s battles, "
            "%(rolls)s rolls, each die from its battle's key, which the revealed keys give "
            "(the earlier battles: in the audit of the game's public record)",
            first=first,
            last=last,
            battles=battles,
            rolls=rolls,
        ), True
    return _(
        "every battle of the game OK: %(battles)s battles, %(rolls)s rolls, each die from its "
        "battle's key, which the revealed keys give",
        battles=battles,
        rolls=rolls,
    ), True


def battle_told(label: str) -> str:
    """A battle's label ("Alberta|Western United States|1") as the reader reads it: the
    attack by the reader's names and its number among the turn's attacks on that pair."""
    parts = label.split("|")
    if len(parts) != 3:
        return label
    return _(
        "%(source)s → %(target)s, attack %(number)s",
        source=place(parts[0]),
        target=place(parts[1]),
        number=parts[2],
    )


def fog_lines(data: Mapping[str, Any]) -> tuple[list[str], bool]:
    """What `pbem verify --report` says of a fog game's view file, and whether it all holds."""
    section = data["dice"]
    board = _board(data)
    if "battle_root" not in section:  # (the setup's report: no battle, the first commitment)
        upcoming = _hex(section.get("next_battle_root"), "next battle commitment")
        return [
            _("the setup rolled no battle"),
            _(
                "next turn's battle commitment: %(root)s (keep it for your next report)",
                root=upcoming.hex(),
            ),
        ], True
    root = _hex(section.get("battle_root"), "battle commitment")
    digest, again = _orders(section)
    battles = section.get("battles")
    if not isinstance(battles, list) or len(battles) > len(fog.labels(board)):
        raise FogVerifyError("the view file's battles are not a list of battles")
    lines: list[str] = []
    ok = True
    key = section.get("key")
    if key is not None:  # (the game is over, or the moderator's): the key gives everything
        resolution_key = _hex(key, "key")
        if fog.battle_root(resolution_key, board) == root:
            lines.append(_("battle commitment OK: the key gives it"))
        else:
            ok = False
            lines.append(_("battle commitment WRONG: the key does not give it"))
    else:
        resolution_key = None
        lines.append(
            _(
                "this turn's battle commitment is %(root)s: it must be the next turn's "
                "commitment of the report before this one",
                root=root.hex(),
            )
        )
    for entry in battles:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("label"), str):
            raise FogVerifyError("a battle of the view file has no label")
        name = entry["label"]
        battle = _hex(entry.get("key"), f"key of battle {quoted(name)}")
        index = entry.get("index")
        path = entry.get("path")
        if not isinstance(index, int) or isinstance(index, bool) or not isinstance(path, list):
            raise FogVerifyError(f"battle {quoted(name)} of the view file has no path")
        steps = [_hex(p, f"path of battle {quoted(name)}") for p in path[:64]]
        rolls = _rolls(entry.get("rolls"))
        committed = fog.check_battle(board, name, battle, index, steps, root)
        derived = resolution_key is None or fog.battle_key(resolution_key, name) == battle
        wrong = dice.check_rolls(fog.battle_dice_key(battle, digest, again), rolls)
        if committed and derived and wrong is None:
            lines.append(
                n_(
                    "battle %(battle)s: key committed to, %(num)s roll, every die matches",
                    "battle %(battle)s: key committed to, %(num)s rolls, every die matches",
                    len(rolls),
                    battle=battle_told(name),
                )
            )
            continue
        ok = False
        if not committed:
            lines.append(
                _(
                    "battle %(battle)s: its key does NOT lead to the commitment",
                    battle=battle_told(name),
                )
            )
        if not derived:
            lines.append(
                _(
                    "battle %(battle)s: its key is NOT the one the resolution's key gives",
                    battle=battle_told(name),
                )
            )
        if wrong is not None:
            lines.append(
                _(
                    "battle %(battle)s: roll %(number)s of %(count)s does NOT match its key",
                    battle=battle_told(name),
                    number=wrong + 1,
                    count=len(rolls),
                )
            )
    if not battles:
        lines.append(_("no battle of this resolution was told to this view's player"))
    if "game" in section and resolution_key is not None:
        line, whole = _whole_game(section, resolution_key)
        lines.append(line)
        ok = ok and whole
    if "next_battle_root" in section:
        upcoming = _hex(section["next_battle_root"], "next battle commitment")
        lines.append(
            _(
                "next turn's battle commitment: %(root)s (keep it for your next report)",
                root=upcoming.hex(),
            )
        )
    return lines, ok
