"""Long games: a self-played game through the game directory, six players with long names (one
in Cyrillic, one with accents), bots' orders mailed in as files, resolved to the end; and a game
of three players thousands of resolutions long, its history written directly (for the
benchmarks and the view files of long games)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from bots import orders_for
from conftest import SEED, write_bot_orders

from pbem.core import dice
from pbem.core.orders import Orders
from pbem.core.state import GameState, Options, Phase, SetupMode, StopAt, state_digest
from pbem.game import processor
from pbem.languages.numbering import Played
from pbem.records import history, store
from pbem.records.opening import read_game
from pbem.records.replay import replay_orders

LONG_NAMES = (
    "Maximiliana-Wolkenstein-Trostbe",
    "Ангелина-Владимировна-Соколова",
    "José-María_de-la-Concepción",
    "Bartholomew_Featherstonehaugh",
    "Zoë-Åsa-Øverby-Çelik-Ñúñez-Ünal",
    "q",
)
MOST_RESOLUTIONS = 160


def play_long_game(directory: Path, seed: int = 12, options: Options | None = None) -> Path:
    """A six-player game, resolved until it is over (or MOST_RESOLUTIONS)."""
    processor.new_game(
        directory,
        processor.parse_player_list(list(LONG_NAMES)),
        options or Options(stop_at=StopAt.THRESHOLD),  # as played before stop_at was a promise
        seed=bytes([seed]) * 32,
        name="long-game",
    )
    rng = random.Random(seed)
    for _ in range(MOST_RESOLUTIONS):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    return directory


def three_player_game(
    directory: Path,
    resolutions: int,
    chain_length: int | None = None,
    name: str | None = None,
    *,
    folders: bool = False,
) -> None:
    """A 3-player game `resolutions` long, written as `pbem resolve` would write its history and
    game file (reports left out: the audit does not read them; with `folders`, every
    resolution's report folder and used order files are there too, as a game played that long
    has them, see `resolution_folders`). Players place their armies and
    attack a little (stopping early), so no one is ever conquered out. The files are not
    synced to the disk while it is built (a thousand syncs of a busy disk take minutes). Its
    key chain is the default's, or longer for a game longer than that; no one attacks a player
    holding three territories or fewer, so the longest games go on. The game's `name` (and so
    its dice) is "long<resolutions>" unless given: games of one name and chain are the same
    game, the shorter ones its beginnings."""
    synced = os.fsync
    os.fsync = lambda fd: None
    try:
        _three_player_game(directory, resolutions, chain_length, name, folders)
    finally:
        os.fsync = synced


def short_orders(state: GameState, name: str, rng: random.Random, secret: str) -> Orders:
    """The orders of `name` in the long game of three: the test bots' placing, one attack
    stopped after a roll or two, not on a player holding three territories or fewer."""
    orders = orders_for(state, name, rng)
    attack = tuple(
        replace(a, stop_at=max(1, state.territories[a.source].armies - 3))
        for a in orders.attack[:1]
        if len(state.owned(state.territories[a.target].owner)) > 3  # (no one falls)
    )
    return replace(orders, secret=secret, attack=attack, fortify=None)


def _three_player_game(
    directory: Path, resolutions: int, chain_length: int | None, name: str | None, folders: bool
) -> None:
    processor.new_game(
        directory,
        processor.parse_player_list(["alice", "bob", "carol"]),
        Options(setup=SetupMode.RANDOM),
        seed=SEED,
        name=name or f"long{resolutions}",
        chain_length=chain_length or max(dice.DEFAULT_CHAIN_LENGTH, resolutions + 1),
    )
    game = read_game(directory)
    secrets = {r.name: r.secret for r in game.registrations}
    rng = random.Random(1)
    state = game.state
    for r in range(1, resolutions):
        records = []
        for name in state.awaiting():
            orders = short_orders(state, name, rng, secrets[name])
            records.append(history.OrderRecord(name, f"{name}.toml", orders.to_toml()))
        after, events = replay_orders(state, records, game.randomness(r))
        history.write_history(
            directory,
            history.HistoryRecord(
                resolution=r,
                turn=state.turn,
                players=tuple(state.awaiting()),
                key=game.key(r).hex(),
                orders=tuple(records),
                events=events,
                state_digest=state_digest(after),
            ),
        )
        if folders:
            played = history.played_in(game, r, state.turn)
            resolution_folders(directory, r, records, played, after.awaiting())
        state = after
        if state.phase is Phase.OVER:
            raise SystemExit("the long game ended early: change its orders")
    store.write_game(replace(game, state=state))


def resolution_folders(
    directory: Path,
    resolution: int,
    records: Sequence[history.OrderRecord],
    played: Played,
    awaited: Sequence[str],
) -> None:
    """What a resolution leaves beside its history file: its report folder, named as pbem names
    it, with the files a real one has (12 for three players: each one's report as text, HTML
    and view file, the moderator's two, and the ready order file of each player awaited next),
    each a hard link to a file of the deal's folder (the names and the number of the files, not
    their contents); and the order files it used in orders/done/NNNN/, as
    archived."""
    deal = directory / "reports" / "0000-deal"
    folder = directory / "reports" / played.folder()
    folder.mkdir()
    ready = sorted(deal.glob("*.orders.toml"))  # (the deal's: the first player's alone)
    for path in deal.iterdir():
        if path not in ready:
            os.link(path, folder / path.name)
    for player in awaited:
        os.link(ready[0], folder / f"{player}.orders.toml")
    done = history.done_dir(directory, resolution)
    done.mkdir(parents=True)
    for record in records:
        (done / record.file).write_text(record.text, "utf-8")
