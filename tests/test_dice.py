"""Auditable randomness (DESIGN section 6): golden values pinned for a known seed and checked
against an independent re-implementation written from the design alone, the key chain, rolls
verification, rejection sampling, and the statistics of the dice."""

from __future__ import annotations

import hashlib
import hmac
import math
from collections import Counter
from collections.abc import Iterator

import pytest

from pbem.core import dice, rules
from pbem.core.dice import Stream

SEED = bytes(range(32))
LENGTH = 4096

COMMITMENT = "04c652ec9a327b04d70dc4950590c2d76d65ee7a13f41afa1482963f91c38f07"
KEYS = {
    0: "270bc6c4a7c34992639cfc2b120ad79b407962183fe8e563fa4778173959f2af",
    1: "ee5b26f3d071152da08a514a8a99717320809ab8b1555ed58c4fde3043e01f22",
    2: "b691924b593bd509115285b01c1d4c5c0b4ba9bacf39566ced566e802c733947",
}
FIRST_DICE_OF_RESOLUTION_1 = (3, 6, 4, 5, 5, 1, 6, 2, 4, 3)
HIDDEN_COMMITMENT = "ebc7e7a34a8f0b01ea71c43acf44c23313e16e7062be978710869fec3d101b63"


# --- an independent re-implementation, from DESIGN section 6 only --------------------------------


def reference_chain(seed: bytes, length: int) -> list[bytes]:
    """k[0] .. k[L]: k[L] = SHA-256("pbem/chain/" || seed), k[i-1] = SHA-256(k[i])."""
    links = [hashlib.sha256(b"pbem/chain/" + seed).digest()]
    for _ in range(length):
        links.append(hashlib.sha256(links[-1]).digest())
    return links[::-1]


def reference_bytes(key: bytes) -> Iterator[int]:
    """HMAC-SHA256(K, "pbem/dice/" || i) for i = 0, 1, 2, ..., i in ASCII decimal."""
    i = 0
    while True:
        yield from hmac.new(key, ("pbem/dice/" + str(i)).encode(), "sha256").digest()
        i += 1


def reference_dice(key: bytes, count: int) -> tuple[int, ...]:
    """die = randbelow(6) + 1, skipping bytes >= 256 - 256 % 6 = 252."""
    out: list[int] = []
    for b in reference_bytes(key):
        if len(out) == count:
            break
        if b < 252:
            out.append(b % 6 + 1)
    return tuple(out)


@pytest.fixture(scope="module")
def chain() -> list[bytes]:
    return reference_chain(SEED, LENGTH)


# --- golden values -----------------------------------------------------------------------------


def test_commitment_is_k0(chain: list[bytes]) -> None:
    assert dice.commitment(SEED, LENGTH).hex() == COMMITMENT
    assert chain[0].hex() == COMMITMENT


def test_chain_end_is_kL(chain: list[bytes]) -> None:
    assert dice.chain_end(SEED) == chain[LENGTH]
    assert dice.chain_key(SEED, LENGTH, LENGTH) == chain[LENGTH]
    assert dice.chain_key(SEED, 100, LENGTH) == chain[100]


@pytest.mark.parametrize("resolution", [0, 1, 2])
def test_resolution_r_uses_key_r_plus_1(chain: list[bytes], resolution: int) -> None:
    assert dice.resolution_key(SEED, resolution, LENGTH).hex() == KEYS[resolution]
    assert chain[resolution + 1].hex() == KEYS[resolution]


def test_the_default_chain_is_4096_links_long() -> None:
    assert dice.DEFAULT_CHAIN_LENGTH == LENGTH
    assert dice.commitment(SEED).hex() == COMMITMENT
    assert dice.resolution_key(SEED, 1).hex() == KEYS[1]


def test_first_dice_of_resolution_1() -> None:
    key = bytes.fromhex(KEYS[1])
    assert Stream.public(key).dice(10) == FIRST_DICE_OF_RESOLUTION_1
    assert reference_dice(key, 10) == FIRST_DICE_OF_RESOLUTION_1


def test_long_public_stream_matches_the_reference() -> None:
    key = bytes.fromhex(KEYS[2])
    assert Stream.public(key).dice(500) == reference_dice(key, 500)


def test_hidden_key_and_its_commitment() -> None:
    h = hmac.new(SEED, b"pbem/hidden", "sha256").digest()
    assert dice.hidden_key(SEED) == h
    assert dice.hidden_commitment(SEED).hex() == HIDDEN_COMMITMENT
    assert hashlib.sha256(h).hexdigest() == HIDDEN_COMMITMENT


def test_hidden_stream_bytes_match_the_design() -> None:
    h = dice.hidden_key(SEED)
    expected = b"".join(
        hmac.new(h, f"pbem/hidden/7/{i}".encode(), "sha256").digest() for i in range(3)
    )
    stream = Stream.hidden(h, 7)
    assert bytes(stream.byte() for _ in range(96)) == expected


# --- the chain ---------------------------------------------------------------------------------


def test_each_key_hashes_to_the_previous() -> None:
    previous = dice.commitment(SEED, LENGTH)
    for resolution in range(6):
        key = dice.resolution_key(SEED, resolution, LENGTH)
        assert dice.key_follows(key, previous)
        assert not dice.key_follows(previous, key)
        previous = key
    k0, k2 = dice.commitment(SEED, LENGTH), dice.resolution_key(SEED, 1, LENGTH)
    assert not dice.key_follows(k2, k0)


def test_chain_index_must_lie_in_the_chain() -> None:
    with pytest.raises(ValueError, match="outside"):
        dice.chain_key(SEED, LENGTH + 1, LENGTH)
    with pytest.raises(ValueError, match="outside"):
        dice.chain_key(SEED, -1, LENGTH)


def test_chain_used_up() -> None:
    assert dice.resolution_key(SEED, 7, 8) == dice.chain_end(SEED)
    with pytest.raises(ValueError, match="used up"):
        dice.resolution_key(SEED, 8, 8)


def test_different_seeds_give_different_chains() -> None:
    assert dice.commitment(bytes(32), 16) != dice.commitment(bytes(31) + b"\x01", 16)


# --- checking rolls ----------------------------------------------------------------------------


def true_rolls(key: bytes) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    stream = Stream.public(key)
    return [(stream.dice(a), stream.dice(d)) for a, d in [(3, 2), (3, 1), (2, 2), (1, 1), (3, 2)]]


def test_check_rolls_accepts_the_true_rolls() -> None:
    key = bytes.fromhex(KEYS[1])
    rolls = true_rolls(key)
    assert rolls[0] == ((3, 6, 4), (5, 5))
    assert dice.check_rolls(key, rolls) is None
    assert dice.check_rolls(key, []) is None


@pytest.mark.parametrize(("index", "side"), [(0, 0), (2, 1), (4, 0), (4, 1)])
def test_check_rolls_names_the_first_changed_roll(index: int, side: int) -> None:
    key = bytes.fromhex(KEYS[1])
    rolls = true_rolls(key)
    changed = list(rolls[index][side])
    changed[-1] = changed[-1] % 6 + 1
    roll = list(rolls[index])
    roll[side] = tuple(changed)
    rolls[index] = (roll[0], roll[1])
    assert dice.check_rolls(key, rolls) == index


def test_check_rolls_rejects_the_rolls_of_another_key() -> None:
    rolls = true_rolls(bytes.fromhex(KEYS[1]))
    assert dice.check_rolls(bytes.fromhex(KEYS[2]), rolls) == 0


def test_check_rolls_notices_dice_in_another_order() -> None:
    key = bytes.fromhex(KEYS[1])
    rolls = true_rolls(key)
    attacker, defender = rolls[1]
    rolls[1] = (tuple(sorted(attacker, reverse=True)), defender)
    assert (attacker, rolls[1][0]) == ((1, 6, 2), (6, 2, 1))
    assert dice.check_rolls(key, rolls) == 1


# --- drawing from a stream ---------------------------------------------------------------------


def fixed(*blocks: bytes) -> Stream:
    """A stream whose blocks are the given bytes, in order, and that records the blocks asked."""
    asked: list[int] = []

    def block(i: int) -> bytes:
        asked.append(i)
        return blocks[i]

    stream = Stream(block)
    stream.asked = asked  # type: ignore[attr-defined]
    return stream


def test_rejection_sampling_skips_bytes_of_252_and_more_for_a_die() -> None:
    stream = fixed(bytes([252, 253, 254, 255, 251, 0, 6, 5]))
    assert stream.dice(4) == (6, 1, 1, 6)


def test_rejection_sampling_limit_depends_on_n() -> None:
    assert fixed(bytes([255, 254, 13])).randbelow(5) == 4  # 256 % 5 = 1: only 255 is skipped
    assert fixed(bytes([255, 7])).randbelow(256) == 255  # nothing is skipped
    assert fixed(bytes([252, 255, 3])).randbelow(7) == 3  # 256 % 7 = 4: 252-255 skipped
    assert fixed(bytes([255])).randbelow(1) == 0
    assert fixed(bytes([200, 10])).randbelow(128) == 72


def test_randbelow_range() -> None:
    with pytest.raises(ValueError):
        fixed(b"\x00").randbelow(0)
    with pytest.raises(ValueError):
        fixed(b"\x00").randbelow(257)


def test_stream_reads_blocks_in_order_and_every_byte_once() -> None:
    stream = fixed(bytes([1, 2]), bytes([3]), bytes([4, 5, 6]))
    assert [stream.byte() for _ in range(6)] == [1, 2, 3, 4, 5, 6]
    assert stream.asked == [0, 1, 2]  # type: ignore[attr-defined]


def test_randbelow_is_uniform() -> None:
    n, draws = 7, 60_000
    stream = Stream.public(bytes.fromhex(KEYS[0]))
    counts = Counter(stream.randbelow(n) for _ in range(draws))
    assert set(counts) == set(range(n))
    expected = draws / n
    chi2 = sum((counts[v] - expected) ** 2 / expected for v in range(n))
    assert chi2 < 22.46  # the 0.1% critical value of chi-square with 6 degrees of freedom


def test_shuffle_is_fisher_yates_from_the_last_position_down() -> None:
    items = ["a", "b", "c", "d", "e"]
    key = bytes.fromhex(KEYS[0])
    reference = list(items)
    stream = Stream.public(key)
    for i in range(len(reference) - 1, 0, -1):
        j = stream.randbelow(i + 1)
        reference[i], reference[j] = reference[j], reference[i]
    assert Stream.public(key).shuffle(items) == tuple(reference)
    assert sorted(reference) == items


def test_hidden_stream_differs_from_public_and_per_resolution() -> None:
    h = dice.hidden_key(SEED)
    key = dice.resolution_key(SEED, 1, LENGTH)

    def head(stream: Stream) -> bytes:
        return bytes(stream.byte() for _ in range(64))

    public = head(Stream.public(key))
    hidden_1 = head(Stream.hidden(h, 1))
    hidden_2 = head(Stream.hidden(h, 2))
    assert len({public, hidden_1, hidden_2}) == 3
    assert head(Stream.hidden(h, 1)) == hidden_1
    assert head(Stream.hidden(dice.hidden_key(bytes(32)), 1)) != hidden_1


def test_dice_statistics_three_against_two() -> None:
    rolls = 100_000
    stream = Stream.public(bytes.fromhex(KEYS[1]))
    outcomes = Counter(rules.battle(stream.dice(3), stream.dice(2)) for _ in range(rolls))
    assert set(outcomes) == {(0, 2), (1, 1), (2, 0)}
    for losses, ways in (((0, 2), 2890), ((1, 1), 2611), ((2, 0), 2275)):
        p = ways / 7776
        error = math.sqrt(p * (1 - p) / rolls)
        assert abs(outcomes[losses] / rolls - p) < 4 * error, (losses, outcomes[losses])


def test_each_face_equally_likely() -> None:
    stream = Stream.public(bytes.fromhex(KEYS[2]))
    counts = Counter(stream.dice(60_000))
    chi2 = sum((counts[f] - 10_000) ** 2 / 10_000 for f in range(1, 7))
    assert chi2 < 20.52  # 0.1% critical value, 5 degrees of freedom


def test_resolution_numbers_start_at_zero() -> None:
    with pytest.raises(ValueError, match="count from 0"):
        dice.resolution_key(SEED, -1)


def test_dice_read_at_once_are_the_dice_rolled_one_by_one() -> None:
    """Whole blocks decoded at once give the same dice as die() called again and again, across
    block ends and skipped bytes, with other draws (bytes, randbelow) in between."""
    key = bytes(range(32))
    fast, slow = Stream.public(key), Stream.public(key)
    for count in [3, 2, 1, 3, 2, 5, 40, 3, 2] * 40:
        assert fast.dice(count) == tuple(slow.die() for _ in range(count))
        assert fast.randbelow(42) == slow.randbelow(42)
        assert fast.byte() == slow.byte()
    assert fast.dice(3000) == tuple(slow.die() for _ in range(3000))


def test_faces_are_the_dice_as_bytes() -> None:
    """`faces` (the battle loop's read) gives the bytes of the dice `dice` gives, skipped bytes
    and block ends included."""
    key = bytes(range(32))
    as_bytes, as_tuple = Stream.public(key), Stream.public(key)
    one_by_one = Stream.public(key)
    for count in [5, 4, 3, 2, 1, 7, 31, 33, 1000, 5, 64, 777, 2, 3000] * 5:
        got = as_bytes.faces(count)
        assert got == bytes(as_tuple.dice(count))
        assert got == bytes(one_by_one.die() for _ in range(count))
        assert as_bytes.byte() == one_by_one.byte() == as_tuple.byte()  # read up to the same byte
    assert fixed(bytes([252, 3, 255, 1, 9])).faces(3) == bytes([4, 2, 4])
    skipping = fixed(bytes([255, 254]) * 20, bytes([252, 1]), bytes([253, 253, 2, 255]))
    assert skipping.faces(2) == bytes([2, 3]) and skipping.byte() == 255
