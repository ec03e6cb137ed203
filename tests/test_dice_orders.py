"""Dice from the key and the orders (docs/dice.md): a turn played again after an undo rolls
the same dice for the same orders and dice nobody could foresee for other orders; old games
keep rolling from the key alone; players check it all with `pbem verify` and their kit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner
from conftest import SEED, attacking, new_game, refused_with_option, skeleton, write_skeletons

from pbem import kit
from pbem.cli import main
from pbem.core import dice
from pbem.core.events import DiceKeyed, DrewCard, Rolled
from pbem.core.order_parsing import parse_orders
from pbem.core.state import DiceRule
from pbem.errors import AuditError
from pbem.game import processor, undo
from pbem.records import store
from pbem.records.clock import parse_instant
from pbem.records.history import HistoryRecord, read_history, read_history_file, report_dir
from pbem.records.opening import read_game
from pbem.records.replay import state_after

NOW = parse_instant("2026-12-01T09:00Z")
FIXTURE = Path(__file__).parent / "fixtures" / "format5-game"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def rolls_of(record: HistoryRecord) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(e.attacker, e.defender) for e in record.events if isinstance(e, Rolled)]


def from_stream(key: bytes, record: HistoryRecord) -> bool:
    """Whether every die of the record is the next one of `key`'s public stream."""
    stream = dice.Stream.public(key)
    return all(stream.dice(len(a)) == a and stream.dice(len(d)) == d for a, d in rolls_of(record))


def digest_of(text: str) -> bytes:
    """D of one order file, as a player computes it from the file they sent."""
    from pbem.core.board import load_board

    canonical = parse_orders(text, load_board("classic")).to_toml()
    return dice.orders_digest([dice.order_file_digest(canonical)])


def played_once(tmp_path: Path) -> Path:
    """A new game after its deal, setup turn and one attacking turn (resolution 2)."""
    d = new_game(tmp_path / "g")
    for _ in range(2):
        write_skeletons(d)
        processor.resolve_game(d)
    return d


def other_orders(d: Path, player: str) -> str:
    return attacking(skeleton(d, player)).replace("stop_at = 3", "dice = 2\nstop_at = 2")


def test_a_new_games_dice_come_from_its_key_and_the_orders(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    game = read_game(d)
    assert game.state.options.dice is DiceRule.ORDERS
    record = read_history(d, 2)
    keyed = record.events[0]
    assert isinstance(keyed, DiceKeyed) and keyed.again is None
    (order,) = record.orders
    assert keyed.players == (order.player,)
    digest = digest_of(order.text)
    assert keyed.orders == digest
    key = bytes.fromhex(record.key)
    assert rolls_of(record) and from_stream(dice.dice_key(key, digest), record)
    assert not from_stream(key, record)  # not the old rule's dice
    assert store._load_toml(d / "game.toml")["options"]["dice"] == "orders"


def test_the_same_orders_played_again_roll_the_same_dice(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    first = read_history(d, 2)
    undo.undo_last(d, NOW, "bob asked")
    processor.resolve_game(d)  # the order file went back to orders/: the same orders
    again = read_history(d, 2)
    assert again.orders[0].text == first.orders[0].text
    assert again.events == first.events
    assert again.state_digest == first.state_digest


def test_other_orders_played_again_roll_dice_nobody_could_foresee(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    first = read_history(d, 2)
    key = bytes.fromhex(first.key)  # every player saw it in the first report
    undo.undo_last(d, NOW, "alice changed her mind")
    player = read_game(d).state.awaiting()[0]
    text = other_orders(d, player)
    (d / "orders" / f"{player}.toml").write_text(text)
    processor.resolve_game(d)
    second = read_history(d, 2)
    digest = digest_of(text)
    assert second.key == first.key and rolls_of(second)
    # What the player could work out from the key they saw and the orders they meant to send:
    assert not from_stream(dice.dice_key(key, digest), second)
    keyed = second.events[0]
    assert isinstance(keyed, DiceKeyed) and keyed.again is not None
    salt = dice.again_salt(dice.hidden_key(SEED), 2, digest)
    assert keyed.again == salt.hex()
    assert from_stream(dice.dice_key(key, digest, salt), second)
    # and the audit replays both, the undone one from its own rule
    assert processor.audit_game(d).resolutions == 3


def test_back_to_the_first_orders_after_two_undos_the_first_dice_again(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    first = read_history(d, 2)
    undo.undo_last(d, NOW, "one")
    player = read_game(d).state.awaiting()[0]
    kept = (d / "orders" / f"{player}.toml").read_text()
    (d / "orders" / f"{player}.toml").write_text(other_orders(d, player))
    processor.resolve_game(d)
    salted = read_history(d, 2)
    undo.undo_last(d, NOW, "two")
    (d / "orders" / f"{player}.toml").write_text(kept)
    for extra in (d / "orders").glob("*-r0002.toml"):
        extra.unlink()
    processor.resolve_game(d)
    assert read_history(d, 2).events == first.events
    undo.undo_last(d, NOW, "three")
    (d / "orders" / f"{player}.toml").write_text(other_orders(d, player))
    for extra in (d / "orders").glob("*-r0002.toml"):
        extra.unlink()
    processor.resolve_game(d)
    assert read_history(d, 2).events == salted.events  # the same other orders: the same dice
    assert processor.audit_game(d).resolutions == 3


def test_the_card_drawn_follows_the_orders_too(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    for _ in range(12):
        write_skeletons(d)
        processor.resolve_game(d)
    r, record = next(
        (r, read_history(d, r))
        for r in range(2, 13)
        if any(isinstance(e, DrewCard) for e in read_history(d, r).events)
    )
    keyed = record.events[0]
    assert isinstance(keyed, DiceKeyed)
    drawn = next(e.card for e in record.events if isinstance(e, DrewCard))
    before = state_after(read_game(d), r - 1)
    pile = list(before.deck)
    hidden = dice.hidden_key(SEED)
    assert pile[dice.Stream.hidden(hidden, r, keyed.orders).randbelow(len(pile))] == drawn


def test_an_old_game_keeps_rolling_from_the_key_alone(tmp_path: Path) -> None:
    d = tmp_path / "old"
    shutil.copytree(FIXTURE, d)
    assert store._load_toml(d / "game.toml")["format"] == 5
    assert processor.audit_game(d).resolutions == 4  # the undone resolution among them
    game = read_game(d)
    assert game.state.options.dice is DiceRule.KEY
    processor.resolve_game(d)
    record = read_history(d, 4)
    assert not any(isinstance(e, DiceKeyed) for e in record.events)
    assert from_stream(bytes.fromhex(record.key), record)
    written = store._load_toml(d / "game.toml")
    assert (written["format"], written["options"]["dice"]) == (store.FORMAT, "key")
    assert processor.audit_game(d).resolutions == 5
    view = json.loads((report_dir(d, 4) / "alice.view.json").read_text())
    assert "orders" not in view["dice"]
    assert "every die matches" in run("verify", "--report", report_dir(d, 4) / "alice.view.json")


@pytest.mark.parametrize(
    ("dice_rule", "said"),
    [(None, "do not say where the dice come from"), ("dealer", "'dealer' is not a rule")],
)
def test_a_game_file_must_say_where_the_dice_come_from(
    tmp_path: Path, dice_rule: str | None, said: str
) -> None:
    refused_with_option(played_once(tmp_path), "dice", dice_rule, said)


def test_the_audit_finds_a_digest_changed_in_the_history(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    path = d / "history" / "0002.toml"
    data = store._load_toml(path)
    keyed = data["events"][0]
    assert keyed["type"] == "dice_keyed"
    keyed["digests"][0] = "00" * 32
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    with pytest.raises(AuditError, match="resolution 2"):
        processor.audit_game(d)


def test_verify_checks_the_dice_key_and_the_players_own_order_file(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    record = read_history(d, 2)
    player = record.orders[0].player
    folder = report_dir(d, 2)
    sent = tmp_path / "sent.toml"
    sent.write_text(record.orders[0].text)
    for name in (f"{player}.view.json", f"{player}.txt", "carol.txt"):
        out = run("verify", "--report", folder / name)
        assert "dice key OK" in out and "every die matches" in out, out
    out = run("verify", "--report", folder / f"{player}.view.json", "--orders", sent)
    assert f"order file of {player} OK" in out
    other = tmp_path / "other.toml"
    other.write_text(other_orders(d, player))
    out = run("verify", "--report", folder / f"{player}.txt", "--orders", other, code=1)
    assert f"order file of {player} does NOT match" in out
    # the kit says the same
    assert (
        kit.main(["verify", "--report", str(folder / "bob.view.json"), "--orders", str(sent)]) == 0
    )


@pytest.mark.parametrize("tamper", ["digest", "dice_key", "drop"])
def test_verify_refuses_a_view_whose_orders_do_not_give_its_dice(
    tmp_path: Path, tamper: str
) -> None:
    d = played_once(tmp_path)
    path = report_dir(d, 2) / "alice.view.json"
    data = json.loads(path.read_text())
    section = data["dice"]
    if tamper == "digest":
        section["orders"][0]["digest"] = "11" * 32
    elif tamper == "dice_key":
        section["dice_key"] = "22" * 32
    else:
        del section["orders"], section["dice_key"], section["orders_digest"]
    changed = tmp_path / "alice.view.json"
    changed.write_text(json.dumps(data))
    out = run("verify", "--report", changed, code=1)
    assert "dice key WRONG" in out or "does NOT match" in out


def test_a_report_in_another_language_verifies_with_its_orders(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    data = store._load_toml(d / "game.toml")
    data["language"] = "sv"
    (d / "game.toml").write_text(tomli_w.dumps(data))
    for _ in range(2):
        write_skeletons(d)
        processor.resolve_game(d)
    text = (report_dir(d, 2) / "alice.txt").read_text()
    assert "pbem/orders/" in text
    out = run("verify", "--report", report_dir(d, 2) / "alice.txt")
    assert "dice key OK" in out and "every die matches" in out


def test_pbem_dice_shows_the_dice_key_and_the_order_files(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    record = read_history(d, 2)
    keyed = record.events[0]
    assert isinstance(keyed, DiceKeyed)
    expected = dice.dice_key(bytes.fromhex(record.key), keyed.orders).hex()
    assert f"dice key {expected}" in run("dice", d, "--turn", "1")
    (entry,) = json.loads(run("dice", d, "--json", "--resolution", "2"))
    assert entry["dice_key"] == expected
    assert entry["orders"] == [{"player": keyed.players[0], "digest": keyed.digests[0]}]


def test_the_undone_salted_resolution_stays_checkable(tmp_path: Path) -> None:
    d = played_once(tmp_path)
    undo.undo_last(d, NOW, "one")
    player = read_game(d).state.awaiting()[0]
    (d / "orders" / f"{player}.toml").write_text(other_orders(d, player))
    processor.resolve_game(d)
    undo.undo_last(d, NOW, "two")
    kept = read_history_file(d / "history" / "undone" / "0002-2" / "0002.toml")
    assert isinstance(kept.events[0], DiceKeyed) and kept.events[0].again
    assert processor.audit_game(d).resolutions == 2
    out = run("verify", "--report", d / "history" / "undone" / "0002-2" / "reports" / "alice.txt")
    assert "played again after an undo with other orders" in out and "every die matches" in out


def test_the_undo_notice_tells_the_players_how_the_dice_go(tmp_path: Path) -> None:
    from email import policy
    from email.parser import BytesParser

    (tmp_path / "pbem.toml").write_text('[mail]\nfrom = "games@example.org"\n')
    d = tmp_path / "g"
    run("new", d, "--players", "alice=a@example.org,bob=b@example.org", "--seed", SEED.hex())
    for _ in range(2):
        write_skeletons(d)
        run("resolve", d)
    run("undo", d, "--why", "a late message", "--now", "2026-12-01T10:00Z")
    told = [
        BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        for path in (d / "outbox").glob("notice-*.eml")
    ]
    assert sorted(str(m["To"]) for m in told) == ["a@example.org", "b@example.org"]
    for message in told:
        text = " ".join(message.get_content().split())  # type: ignore[attr-defined]
        assert "The same orders roll the same dice as the first time" in text


CANONICAL = """\
game = "g"
turn = 3
player = "alice"
secret = "0123456789abcdef01234567"
trade = [["Alaska", "Peru", "wild"]]

[[place]]
territory = "Alaska"
armies = 3

[[place]]
territory = "Peru"
armies = "rest"

[[attack]]
from = "Alaska"
to = "Kamchatka"
dice = 2
stop_at = 3
move = "min"

[fortify]
from = "Peru"
to = "Brazil"
armies = "all"
"""

SPELT_OTHERWISE = """\
# my turn
player = "alice"   # me
game = "g"
secret = "0123456789abcdef01234567"
turn = 3
trade = [ [ "Alaska", "Peru", "wild" ] ]
place = [ { territory = "Alaska", armies = 3 }, { armies = "rest", territory = "Peru" } ]

[[attack]]
move = "min"
to = "Kamchatka"
stop_at = 3
dice = 2
from = "Alaska"

[fortify]
armies = "all"
to = "Brazil"
from = "Peru"
"""


def test_the_digest_of_an_order_file_is_fixed_by_the_rule_not_by_its_spelling() -> None:
    """The canonical form is part of the dice rule: every game of format 6 replays from it, so
    a change to how pbem writes orders back must keep these bytes (or be a new rule)."""
    from pbem.core.board import load_board

    board = load_board("classic")
    for text in (CANONICAL, SPELT_OTHERWISE):
        orders = parse_orders(text, board)
        assert orders.to_toml() == CANONICAL
        assert dice.order_file_digest(orders.to_toml()).hex() == (
            "42b526720d512e27675aad801853012b4c2a0ce6955b136feb4b24cdea450dc7"
        )


def test_no_report_shows_the_record_of_the_orders_as_it_is_kept(tmp_path: Path) -> None:
    from pbem.present.sentences import narrate

    d = played_once(tmp_path)
    for path in report_dir(d, 2).iterdir():
        assert "DiceKeyed" not in path.read_text(), path.name
        assert "dice_keyed" not in path.read_text() or path.suffix == ".json", path.name
    keyed = read_history(d, 2).events[0]
    assert narrate(keyed, None) == (
        f"The dice come from the key and the order files of {keyed.players[0]}."  # type: ignore[attr-defined]
    )
