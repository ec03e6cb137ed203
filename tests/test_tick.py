"""A tick costs what is due: `pbem run` keeps an index of what each game's status is made of
(`.pbem-tick/`), and `pbem status` and `pbem run` read again only the games whose files
changed, yet never say what the files do not (docs/batch.md, "The index")."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import test_batch
import test_batch_mail
from click.testing import CliRunner
from conftest import write_skeletons
from test_batch import NOW, PBEM, READY, make
from test_mail import message, orders_for

from pbem.cli import main
from pbem.club import status as game_status
from pbem.club.status import State, root_status, tick
from pbem.errors import PbemError
from pbem.records import clock, rootindex
from pbem.records.disk import GAME_FILE
from pbem.records.history import history_count
from pbem.records.opening import read_game

pristine = test_batch.pristine  # the twelve games of test_batch, in every state
root = test_batch.root
template = test_batch_mail.template  # three games that take mail


@pytest.fixture
def club(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "club"))


EARLY = "2027-02-26T12:00:00+00:00"
"""Before the deadline of the game 'overdue' (2027-02-27 12:00)."""


def invoke(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def age(root: Path, seconds: float = 3600) -> None:
    """Every file and folder of a root as if written an hour ago: past the index's wait for
    files that just changed (rootindex.RACY_NS)."""
    past = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The games a tick reads from their files (not from the index), by folder name."""
    read: list[str] = []
    real = game_status.read_facts

    def counted(directory: Path) -> game_status.Facts:
        read.append(directory.name)
        return real(directory)

    monkeypatch.setattr(game_status, "read_facts", counted)
    return read


def kept(root: Path) -> None:
    """The index made as `pbem run` makes it (without resolving anything)."""
    tick(root, clock.parse_instant(NOW), keep=True)


def both(root: Path, now: str = NOW) -> tuple[str, str]:
    return invoke("status", root, "--now", now), invoke("status", root, "--now", now, "--json")


def test_a_tick_reads_no_unchanged_game_and_says_what_a_full_reading_says(
    root: Path, reads: list[str]
) -> None:
    age(root)
    assert not (root / rootindex.INDEX_FOLDER).exists()
    kept(root)
    assert len(reads) == 12
    reads.clear()
    from_index = both(root)
    assert reads == []  # not one game read again
    for now in (EARLY, "2030-01-01T00:00:00Z"):
        both(root, now)
    assert reads == []
    for path in (root / rootindex.INDEX_FOLDER).iterdir():
        path.unlink()
    assert both(root) == from_index  # byte for byte what the files say
    assert len(reads) == 24  # (twice: the table, then the JSON)


def test_pbem_status_writes_no_index_and_pbem_run_does(root: Path) -> None:
    age(root)
    invoke("status", root, "--now", NOW)
    assert not (root / rootindex.INDEX_FOLDER).exists()
    invoke("run", root, "--now", NOW, "--dry-run", code=1)  # (two games are damaged)
    assert not (root / rootindex.INDEX_FOLDER).exists()
    invoke("run", root, "--now", NOW, code=1)
    assert (root / rootindex.INDEX_FOLDER / "status.json").is_file()
    assert (root / rootindex.INDEX_FOLDER / "names.json").is_file()


def state_of(root: Path, name: str, now: str = NOW) -> game_status.GameStatus:
    (found,) = [s for s in root_status(root, clock.parse_instant(now)) if s.name == name]
    return found


def test_an_order_file_saved_by_hand_makes_its_game_ready(root: Path, reads: list[str]) -> None:
    age(root)
    kept(root)
    reads.clear()
    assert state_of(root, "waiting-four").state is State.WAITING
    write_skeletons(root / "waiting-four")
    assert state_of(root, "waiting-four").state is State.READY
    assert reads == ["waiting-four"]


def test_an_order_file_changed_in_place_with_its_size_is_read_again(
    root: Path, reads: list[str]
) -> None:
    age(root)
    kept(root)
    reads.clear()
    ann = root / "waiting-four" / "orders" / "ann.toml"
    assert state_of(root, "waiting-four").valid == ("ann",)
    text = ann.read_text()
    with ann.open("r+") as handle:  # the same file, the same length, one letter of the secret
        handle.write(text.replace('secret = "', 'secret = "x', 1)[: len(text)])
    assert state_of(root, "waiting-four").valid == ()
    assert reads == ["waiting-four"]


def test_a_game_file_edited_is_read_again(root: Path, reads: list[str]) -> None:
    age(root)
    kept(root)
    reads.clear()
    game_file = root / "waiting-five" / GAME_FILE
    text = game_file.read_text()
    game_file.write_text(text.replace("current = ", "current = 7 #", 1))
    found = state_of(root, "waiting-five")
    assert found.state is State.DAMAGED and "current seat 7" in found.reason
    assert reads == ["waiting-five"]


def test_a_setting_changed_above_the_games_has_every_game_read_again(
    root: Path, reads: list[str]
) -> None:
    age(root, 600)  # the orders came in ten minutes ago
    kept(root)
    reads.clear()
    real_now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    assert state_of(root, "ready-two", real_now).state is State.READY
    (root / "pbem.toml").write_text('[mail]\ngrace = "2h"\n')
    found = state_of(root, "ready-two", real_now)
    assert found.state is State.WAITING and "in case a correction comes" in found.reason
    assert len(reads) == 12  # every game is under the new settings


def test_a_deadline_passes_with_no_file_changed_and_the_clock_goes_back(
    root: Path, reads: list[str]
) -> None:
    age(root)
    kept(root)
    reads.clear()
    assert state_of(root, "overdue", EARLY).state is State.WAITING
    assert state_of(root, "overdue", NOW).state is State.OVERDUE
    assert state_of(root, "overdue", EARLY).state is State.WAITING  # --now earlier again
    assert reads == []


def test_a_game_changed_just_now_is_not_kept_in_the_index(root: Path, reads: list[str]) -> None:
    age(root)
    os.utime(root / "waiting-four" / GAME_FILE)  # written a moment ago
    kept(root)
    reads.clear()
    state_of(root, "waiting-four")
    assert reads == ["waiting-four"]  # a change in the same tick of the clock would be missed


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.unlink(),
        lambda p: p.write_bytes(b"\x00garbage"),
        lambda p: p.write_bytes(p.read_bytes().replace(b'"version": 1', b'"version": 0', 1)),
        lambda p: p.write_bytes(p.read_bytes().replace(b"waiting", b"WAITING")),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    ],
    ids=["deleted", "garbage", "another version", "edited", "cut short"],
)
def test_an_index_lost_or_damaged_is_rebuilt(root: Path, reads: list[str], damage: object) -> None:
    age(root)
    kept(root)
    before = both(root)
    reads.clear()
    damage(root / rootindex.INDEX_FOLDER / "status.json")  # type: ignore[operator]
    assert both(root) == before
    assert len(reads) == 24  # read again from the files, for the table and the JSON
    kept(root)
    reads.clear()
    assert both(root) == before
    assert reads == []


def test_mail_routed_into_a_game_makes_it_ready(club: Path, tmp_path: Path) -> None:
    from test_mail import NOW as MAIL_NOW
    from test_mail import into_maildir

    age(club)
    invoke("run", club, "--now", MAIL_NOW.isoformat())
    orders = [
        message("ann@example.org", orders_for(club / "friday", "ann"), mid="<a@t>"),
        message("ben@example.org", orders_for(club / "friday", "ben"), mid="<b@t>"),
    ]
    box = into_maildir(tmp_path / "box", orders)
    output = invoke("run", club, "--maildir", box, "--now", MAIL_NOW.isoformat())
    (row,) = [line for line in output.splitlines() if line.split()[1:2] == ["friday"]]
    assert row.startswith("resolved ")
    assert read_game(club / "friday").state.resolution == 2


def test_a_new_game_is_refused_the_name_a_game_was_renamed_to_after_the_index(
    root: Path,
) -> None:
    age(root)
    invoke("run", root, "--now", NOW, code=1)
    game_file = root / "waiting-four" / GAME_FILE
    game_file.write_text(game_file.read_text().replace('game = "waiting-four"', 'game = "later"'))
    out = invoke("new", root / "other", "--players", "a,b", "--name", "Later", code=1)
    assert "already holds a game called 'Later'" in out


# --- shards --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0/4", "5/4", "1", "a/b", "2/0", "-1/3", "1/4/2"])
def test_a_shard_that_is_not_one_is_refused_with_a_sentence(root: Path, text: str) -> None:
    for command in ("status", "run"):
        out = invoke(command, root, "--shard", text, code=1)
        assert f"--shard '{text}' is not a shard: write K/N" in out
        assert "Traceback" not in out


def test_the_shards_share_out_every_game_once(root: Path) -> None:
    games = {s.name for s in root_status(root, clock.parse_instant(NOW))}
    seen: list[str] = []
    for k in range(1, 5):
        seen += [s.name for s in root_status(root, clock.parse_instant(NOW), (k, 4))]
    assert sorted(seen) == sorted(games)


def test_four_shards_at_once_resolve_every_due_game_exactly_once(
    pristine: Path,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "games"
    shutil.copytree(pristine, folder)
    for i in range(12):  # more due games, for the shards to share
        write_skeletons(make(folder / "more", f"more-{i}", 2, "random"))
    due = READY | {"locked"} | {f"more-{i}" for i in range(12)}  # (no lock held here)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    runs = [
        subprocess.Popen(
            [*PBEM, "run", str(folder), "--now", NOW, "--shard", f"{k}/4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(1, 5)
    ]
    outputs = [r.communicate(timeout=600)[0] for r in runs]
    resolved = [
        line.split()[1]
        for out in outputs
        for line in out.splitlines()
        if line.startswith("resolved ")
    ]
    assert sorted(resolved) == sorted(due)  # none twice, none missed
    listed = [line.split()[1] for out in outputs for line in out.splitlines()[1:-1]]
    assert len(listed) == len(set(listed)) == 24  # every game in one shard's summary
    for name in due:
        directory = next(folder.rglob(f"{name}/{GAME_FILE}")).parent
        assert history_count(directory) == 2, name  # the deal, and one resolution
    again = [
        subprocess.run(
            [*PBEM, "run", str(folder), "--now", NOW, "--shard", f"{k}/4"],
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        for k in range(1, 5)
    ]
    assert not any(line.startswith("resolved ") for out in again for line in out.splitlines())


def test_only_the_first_shard_fetches(club: Path, tmp_path: Path) -> None:
    from test_mail import into_maildir

    box = into_maildir(
        tmp_path / "box",
        [message("ann@example.org", orders_for(club / "friday", "ann"), mid="<a@t>")],
    )
    second = invoke("run", club, "--maildir", box, "--shard", "2/2")
    assert "fetch: left to shard 1 of 2" in second
    assert not (club / "friday" / "orders" / "ann.toml").exists()
    first = invoke("run", club, "--maildir", box, "--shard", "1/2")
    assert "accepted: <a@t>" in first
    assert (club / "friday" / "orders" / "ann.toml").exists()


def test_the_shard_of_a_game_is_its_path_s_sha256() -> None:
    import hashlib

    number = int.from_bytes(hashlib.sha256(b"club/autumn/nested").digest()[:8], "big")
    assert rootindex.in_shard("club/autumn/nested", (number % 3 + 1, 3))
    assert not rootindex.in_shard("club/autumn/nested", ((number + 1) % 3 + 1, 3))
    with pytest.raises(PbemError):
        rootindex.parse_shard("3/2")
    assert rootindex.parse_shard(" 2/3 ") == (2, 3)


def test_a_games_own_settings_behind_a_link_are_read_again_when_the_file_changes(
    root: Path, tmp_path: Path, reads: list[str]
) -> None:
    shared = tmp_path / "shared.toml"
    shared.write_text('[mail]\ngrace = "2h"\n')
    (root / "ready-two" / "pbem.toml").symlink_to(shared)
    age(root, 600)
    os.utime(shared, (time.time() - 600, time.time() - 600))
    real_now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    kept(root)
    assert state_of(root, "ready-two", real_now).state is State.WAITING
    reads.clear()
    shared.write_text('[mail]\ngrace = "0"\n')  # the file linked to: the link is as it was
    assert state_of(root, "ready-two", real_now).state is State.READY
    assert reads == ["ready-two"]


def test_a_game_file_behind_a_link_is_read_again_when_the_file_changes(
    root: Path, tmp_path: Path, reads: list[str]
) -> None:
    elsewhere = tmp_path / "waiting-five.toml"
    (root / "waiting-five" / GAME_FILE).rename(elsewhere)
    (root / "waiting-five" / GAME_FILE).symlink_to(elsewhere)
    age(root)
    os.utime(elsewhere, (time.time() - 3600, time.time() - 3600))
    kept(root)
    reads.clear()
    elsewhere.write_text(elsewhere.read_text().replace("current = ", "current = 7 #", 1))
    found = state_of(root, "waiting-five")
    assert found.state is State.DAMAGED and "current seat 7" in found.reason
    assert reads == ["waiting-five"]


def test_the_first_history_file_and_the_last_two_are_looked_at_not_every_one(
    root: Path, reads: list[str]
) -> None:
    age(root)
    kept(root)
    reads.clear()
    history = root / "waiting-five" / "history"
    first = history / "0000.toml"
    before = first.stat()
    first.write_bytes(first.read_bytes().replace(b"key = ", b"key = 0", 1)[: before.st_size])
    os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same size and time
    assert state_of(root, "waiting-five").state is State.DAMAGED  # its change time told
    parts: list[object] = []
    rootindex._scan(root / "waiting-five", parts)
    looked = [p[1] for p in parts if isinstance(p, tuple) and len(p) == 3 and p[0] == "history"]
    numbered = sorted(p.name for p in history.glob("[0-9][0-9][0-9][0-9].toml"))
    assert [n for n in looked if n in numbered] == sorted({numbered[0], *numbered[-2:]})
