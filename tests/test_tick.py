"""A tick costs what is due: `pbem run` keeps an index of what each game's status is made of
(`.pbem-tick/`), and `pbem status` and `pbem run` read again only the games whose files
changed, yet never say what the files do not (docs/batch.md, "The index")."""

from __future__ import annotations

import json
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
from pbem.records import root as root_module
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


class GuardClock:
    """The clock of the index's guard against files changed just now (rootindex.now_ns), as
    these tests move it: a file's change time cannot be set back, so a file is not aged, the
    clock is moved on."""

    def __init__(self) -> None:
        self.ahead_ns = 0
        self.stopped: int | None = None

    def __call__(self) -> int:
        return self.stopped if self.stopped is not None else time.time_ns() + self.ahead_ns


GUARD = GuardClock()


@pytest.fixture(autouse=True)
def guard_clock(monkeypatch: pytest.MonkeyPatch) -> GuardClock:
    GUARD.ahead_ns, GUARD.stopped = 0, None
    monkeypatch.setattr(rootindex, "now_ns", GUARD)
    return GUARD


def age(root: Path, seconds: float = 3600) -> None:
    """Every file and folder of a root as if written an hour ago: their modification times
    (which the status reads: when orders came in) set back, and the guard's clock moved on,
    past its wait for files that just changed (rootindex.RACY_NS)."""
    past = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)
    GUARD.ahead_ns += int(seconds * 1e9)


def settle() -> None:
    """What changed until now has settled, for the guard, and what changes next has not: its
    clock stopped just past its wait after this moment."""
    mark = time.time_ns()
    time.sleep(0.05)  # (past a tick of the file system's clock, which may lag the machine's)
    GUARD.stopped = mark + rootindex.RACY_NS + 1


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
    settle()
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
    """A name edited by hand inside a game file (the game is then damaged: its history holds
    its name) is seen by `pbem new` at once where the folder changed since the index, and
    everywhere from the next tick on (docs/batch.md, "The index")."""
    age(root)
    invoke("run", root, "--now", NOW, code=1)
    game_file = root / "waiting-four" / GAME_FILE
    game_file.write_text(game_file.read_text().replace('game = "waiting-four"', 'game = "later"'))
    out = invoke("new", root / "other", "--players", "a,b", "--name", "Later", code=1)
    assert "already holds a game called 'Later'" in out
    assert "does not match the history" in state_of(root, "later").reason
    indexed(root)  # every folder as the index saw it
    game_file.write_text(game_file.read_text().replace('game = "later"', 'game = "sooner"'))
    invoke("run", root, "--now", NOW, code=1)  # the next tick reads every game file's look
    out = invoke("new", root / "other", "--players", "a,b", "--name", "Sooner", code=1)
    assert "already holds a game called 'Sooner'" in out


def test_a_file_copied_in_with_its_old_time_is_not_kept_until_it_settles(
    root: Path, reads: list[str], tmp_path: Path
) -> None:
    """`cp -p` over a file writes it in place and keeps the old modification time; its change
    time is the copy's. Counted by its modification time alone it would be kept at once, and a
    second copy of the same size and time within the clock's tick of a coarse file system
    never read."""
    age(root)
    kept(root)
    ann = root / "waiting-four" / "orders" / "ann.toml"
    wrong = tmp_path / "ann.toml"
    wrong.write_text(ann.read_text().replace('secret = "', 'secret = "x', 1))
    os.utime(wrong, (time.time() - 7200, time.time() - 7200))
    settle()
    shutil.copy2(wrong, ann)  # as `cp -p` copies: in place, the old time kept
    assert ann.stat().st_mtime < time.time() - 3600
    kept(root)
    reads.clear()
    assert state_of(root, "waiting-four").valid == ()
    assert reads == ["waiting-four"]  # not kept: it changed a moment ago
    GUARD.stopped = None
    kept(root)
    reads.clear()
    assert state_of(root, "waiting-four").valid == ()
    assert reads == []


# --- pbem new: the names of a root from the index ------------------------------------------


def indexed(root: Path) -> None:
    """The root indexed with every folder settled, as a root is between two ticks of cron: the
    folders' looks are kept from the second save of the index on (`_folders_tell`)."""
    kept(root)
    age(root)
    kept(root)


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The games whose game file the check of a new name looks at or reads, by folder name."""
    seen: list[str] = []
    real_look, real_read = rootindex._game_file, root_module.game_name

    def look(folder: str) -> rootindex.Look | None:
        mark = real_look(folder)
        if mark is not None:
            seen.append(Path(folder).name)
        return mark

    def read(directory: Path) -> str:
        seen.append(f"read {directory.name}")
        return real_read(directory)

    monkeypatch.setattr(rootindex, "_game_file", look)
    monkeypatch.setattr(root_module, "game_name", read)
    return seen


def refused(root: Path, name: str) -> str | None:
    """Why `pbem new` would refuse a new game of this name in the root, or None."""
    try:
        root_module.refuse_duplicate(root / "brand-new", name)
    except PbemError as err:
        return str(err)
    return None


def test_a_new_name_is_checked_without_a_look_at_the_games_of_unchanged_folders(
    root: Path, looked: list[str]
) -> None:
    indexed(root)
    looked.clear()
    reason = refused(root, "NESTED") or ""
    assert f"{root / 'club' / 'autumn' / 'nested'} already holds a game called 'NESTED'" in reason
    assert refused(root, "Waiting-Four") and refused(root, "ｄａｍａｇｅｄ")
    assert refused(root, "autumn") is None and refused(root, "brand-new") is None
    assert looked == []  # not one game file looked at, nor read
    out = invoke("new", root / "new" / "one", "--players", "a,b", "--name", "overdue", code=1)
    assert f"{root / 'overdue'} already holds a game called 'overdue'" in out


@pytest.mark.parametrize("where", ["a new folder", "a folder of games", "the root"])
def test_a_game_added_since_the_index_is_seen(root: Path, looked: list[str], where: str) -> None:
    indexed(root)
    folder = {"a new folder": root / "club" / "winter", "a folder of games": root / "club"}
    test_batch.make(folder.get(where, root), "added", 2)
    looked.clear()
    assert "already holds a game called 'ADDED'" in (refused(root, "ADDED") or "")
    assert "read added" in looked  # (its name is not in the index: it is read)
    if where != "the root":  # the games of the root's own folder are taken from the index
        assert set(looked) == {"added", "read added"}


def test_a_game_file_put_in_a_folder_that_was_no_game_is_seen(
    root: Path, looked: list[str]
) -> None:
    (root / "club" / "winter").mkdir()
    indexed(root)
    game = test_batch.make(root / "elsewhere", "spring", 2)
    for path in game.iterdir():  # moved in file by file: the folder itself was there
        path.rename(root / "club" / "winter" / path.name)
    assert "winter already holds a game called 'spring'" in (refused(root, "spring") or "")


def test_a_game_restored_with_its_folder_s_old_times_is_seen(root: Path) -> None:
    """`rsync -a` and `cp -rp` set a folder's modification time back after filling it; its
    change time cannot be set, and shows."""
    indexed(root)
    autumn = root / "club" / "autumn"
    before = autumn.stat()
    shutil.copytree(root / "overdue", autumn / "restored")
    os.utime(autumn, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert f"{autumn / 'restored'} already holds a game called 'overdue'" in (
        refused(root, "overdue") or ""
    )


def test_a_folder_removed_frees_its_games_names(root: Path) -> None:
    indexed(root)
    assert refused(root, "nested")
    shutil.rmtree(root / "club" / "autumn")
    assert refused(root, "nested") is None
    indexed(root)
    shutil.rmtree(root / "club")
    assert refused(root, "nested") is None


def test_a_game_moved_to_another_folder_is_found_where_it_is(root: Path) -> None:
    indexed(root)
    (root / "club" / "winter").mkdir()
    (root / "waiting-four").rename(root / "club" / "winter" / "waiting-four")
    reason = refused(root, "waiting-four") or ""
    assert f"{root / 'club' / 'winter' / 'waiting-four'} already holds" in reason
    (root / "club" / "winter" / "waiting-four").rename(root / "club" / "autumn" / "moved")
    reason = refused(root, "waiting-four") or ""
    assert f"{root / 'club' / 'autumn' / 'moved'} already holds" in reason


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.unlink(),
        lambda p: p.write_bytes(b"\x00garbage"),
        lambda p: p.write_bytes(p.read_bytes().replace(b'"version": 2', b'"version": 1', 1)),
        lambda p: p.write_bytes(p.read_bytes().replace(b"nested", b"NESTLE")),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    ],
    ids=["deleted", "garbage", "another version", "edited", "cut short"],
)
def test_a_names_index_lost_or_damaged_is_not_trusted(
    root: Path, looked: list[str], damage: object
) -> None:
    indexed(root)
    damage(root / rootindex.INDEX_FOLDER / rootindex.NAMES)  # type: ignore[operator]
    looked.clear()
    assert "already holds a game called 'nested'" in (refused(root, "nested") or "")
    assert refused(root, "nestle") is None
    assert "read nested" in looked and "read overdue" in looked  # every game read again


def test_a_folder_changed_just_before_the_index_is_listed_again(
    root: Path, looked: list[str]
) -> None:
    kept(root)
    settle()
    os.utime(root / "club" / "autumn")  # changed a moment ago: its clock may not tell the next
    kept(root)
    folders = json.loads(
        (root / rootindex.INDEX_FOLDER / rootindex.NAMES).read_bytes().partition(b"\n")[2]
    )["folders"]
    assert folders["club/autumn"][0] is None and folders["club"][0] is not None
    game_file = root / "club" / "autumn" / "nested" / GAME_FILE  # edited in place, by hand
    game_file.write_text(game_file.read_text().replace('game = "nested"', 'game = "nestle"'))
    looked.clear()
    assert "already holds a game called 'nestle'" in (refused(root, "nestle") or "")
    assert looked == ["nested", "read nested"]  # its game file looked at, and read: it changed


def test_a_folder_with_an_index_of_its_own_is_searched_with_it(
    root: Path, looked: list[str]
) -> None:
    """A club a tick is run over apart, inside a root searched whole (a pbem.toml above it):
    the root has no index, the club's games are taken from the club's."""
    club = root / "club"
    indexed(club)
    assert not (root / rootindex.INDEX_FOLDER).exists()
    looked.clear()
    found = rootindex.games_named(root, "nested", root_module.game_name, root_module.fold)
    assert found == [club / "autumn" / "nested"]
    assert "overdue" in looked and "read overdue" in looked  # (the root's own: no index)
    assert "nested" not in looked and "read nested" not in looked


def test_a_file_system_that_does_not_mark_folders_changed_is_never_trusted(
    root: Path, looked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rootindex, "_folders_tell", lambda root: False)
    indexed(root)
    looked.clear()
    assert refused(root, "nested")
    assert sorted(looked) == sorted(test_batch.STATES)  # every game file looked at
    assert not any(seen.startswith("read ") for seen in looked)  # (names from the index)


def test_the_index_folder_s_probe_tells_this_file_system_marks_folders(tmp_path: Path) -> None:
    assert not rootindex._folders_tell(tmp_path)  # (its folder made just now: no answer yet)
    assert rootindex._folders_tell(tmp_path)
    assert [p.name for p in (tmp_path / rootindex.INDEX_FOLDER).iterdir()] == []


def test_the_walk_finds_what_find_games_finds_in_its_order(tmp_path: Path) -> None:
    from pbem.records.root import find_games

    games = tmp_path / "games"
    for key in ["a-b/x", "a/x", "a/b-c/y", "a/b/z", "B/q", "b/p", "a/x.y", "a0", "é/x", ".h/x"]:
        (games / key).mkdir(parents=True)
        (games / key / GAME_FILE).write_text("")
    (games / "a" / "b" / "z" / "inner").mkdir()
    (games / "a" / "b" / "z" / "inner" / GAME_FILE).write_text("")
    (games / "linked").symlink_to(games / "a" / "x")
    found = rootindex.walk(games)
    assert [f.path for f in found] == find_games(games)
    assert [f.key for f in found][:3] == ["B/q", "a/b/z", "a/b-c/y"]


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
