"""The sweep of temporaries under a game's lock and the check for symbolic links are one walk:
under the lock, `refuse_links` takes the sweep's word that the game holds no link (`swept`),
which must be what `first_link` would find, wherever links are planted."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import write_skeletons

from pbem import files
from pbem.errors import GameFileError
from pbem.files import GAME_FOLDERS, first_link, swept
from pbem.game import processor
from pbem.records.disk import locked
from pbem.records.history import report_dir

PLACES = [
    "reports/0000-deal",
    "reports/0001-setup-turn",
    "reports/0001-setup-turn/deep/er",
    "reports/0007-turn-6",
    "reports/0008-turn-7",
    "reports/notes",
    "orders",
    "orders/done/0003",
    "orders/done/0008",
    "orders/done/0009",
    "history",
    "mail/.hidden",
    "outbox/sent",
    "templates",
    "locale/sv/LC_MESSAGES",
    "somewhere/else",  # (not a game folder: no link counts there)
    "",
]


def planted(root: Path, rng: random.Random) -> Path:
    """A game folder of those PLACES, with a few links of every kind somewhere (or none)."""
    for place in PLACES:
        (root / place).mkdir(parents=True, exist_ok=True)
        (root / place / "file.txt").write_text("x")
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "f").write_text("secret")
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        place = rng.choice([*PLACES, *GAME_FOLDERS])
        target = rng.choice([outside / "f", outside, root / "game.toml"])
        link = root / place / f"link{rng.randrange(1000)}"
        if place in GAME_FOLDERS and not (root / place).exists():
            link = root / place
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, link)
    return root


@pytest.mark.parametrize("seed", range(120))
def test_the_sweep_finds_a_link_exactly_when_the_link_check_does(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    game = planted(tmp_path / "game", rng)
    (game / "history" / ".0001.toml.abcdefgh.tmp").write_text("left by a killed run")
    removed, clean = swept(game)
    assert clean == (first_link(game) is None), first_link(game)
    assert game / "history" / ".0001.toml.abcdefgh.tmp" in removed


def test_a_link_planted_everywhere_the_check_looks_is_seen_by_the_sweep(tmp_path: Path) -> None:
    """The test above can fail: each place where first_link finds a link, the sweep does too."""
    seen = 0
    for i, place in enumerate([p for p in PLACES if p != "somewhere/else"]):
        game = planted(tmp_path / f"g{i}", random.Random(-1))
        link = game / place / "a-link"
        os.symlink(tmp_path, link)
        if first_link(game) is not None:
            seen += 1
            assert swept(game)[1] is False, place
    assert seen >= 10  # (the older folders of reports/ and orders/done/ are not walked)
    assert swept(planted(tmp_path / "clean", random.Random(-1)))[1] is True


def test_under_its_lock_a_game_is_walked_once(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resolve lists reports/ once (the sweep), not once more for the link check."""
    write_skeletons(playing_dir)
    listed: list[str] = []
    real = os.scandir

    def counting(path: object) -> object:
        listed.append(os.fspath(path))  # type: ignore[arg-type]
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(files.os, "scandir", counting)
    processor.resolve_game(playing_dir)
    assert listed.count(str(playing_dir / "reports")) == 1, listed


def test_a_link_under_the_lock_is_still_refused_naming_it(playing_dir: Path) -> None:
    folder = report_dir(playing_dir, 0)
    os.symlink(playing_dir / "game.toml", folder / "stolen.txt")
    with pytest.raises(GameFileError, match="stolen.txt is a symbolic link"):
        processor.resolve_game(playing_dir)
    with locked(playing_dir), pytest.raises(GameFileError, match="stolen.txt"):
        files.refuse_links(playing_dir)
