"""Randomness anyone can audit: the key chain and the keyed streams of docs/dice.md.

All chance in a game comes from two streams. The public stream of a resolution is keyed by
that resolution's key from a hash chain whose end (the commitment) is published in the first
report; the key itself is revealed in the report of the resolution that used it, so any player
can check `SHA-256(key) == previous key` and recompute every die. The hidden stream (card draws)
is keyed from the seed and revealed only when the game ends.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence

DEFAULT_CHAIN_LENGTH = 4096
MAX_CHAIN_LENGTH = 100_000
"""The longest key chain a game may have (`chain_length` in game.toml): no resolution of any
game is further than this from its commitment."""


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.digest(key, message, "sha256")  # HMAC-SHA256 in one call (OpenSSL's)


def chain_end(seed: bytes) -> bytes:
    """k[L]: the first link computed from the seed, the last one ever revealed."""
    return _sha256(b"pbem/chain/" + seed)


@functools.lru_cache(maxsize=16)
def _chain(seed: bytes, length: int) -> tuple[bytes, ...]:
    """The whole chain k[0..L], computed once per game (L hashes) and kept."""
    sha256 = hashlib.sha256  # every command that reads a game checks its keys: a tight loop
    link = chain_end(seed)
    links = [link]
    for _ in range(length):
        link = sha256(link).digest()
        links.append(link)
    links.reverse()
    return tuple(links)


def chain_key(seed: bytes, index: int, length: int = DEFAULT_CHAIN_LENGTH) -> bytes:
    """k[index] of the chain k[L] = SHA-256("pbem/chain/" || seed), k[i-1] = SHA-256(k[i])."""
    if not 0 <= index <= length:
        raise ValueError(f"chain index {index} outside 0..{length}")
    return _chain(seed, length)[index]


def commitment(seed: bytes, length: int = DEFAULT_CHAIN_LENGTH) -> bytes:
    """k[0], published before any die is rolled."""
    return chain_key(seed, 0, length)


def resolution_key(seed: bytes, resolution: int, length: int = DEFAULT_CHAIN_LENGTH) -> bytes:
    """The key of resolution r is k[r + 1]; setup (r = 0) uses k[1]."""
    if resolution < 0:
        raise ValueError(f"resolutions count from 0, not {resolution}")
    if resolution + 1 > length:
        raise ValueError(f"the key chain of {length} links is used up at resolution {resolution}")
    return chain_key(seed, resolution + 1, length)


def key_follows(key: bytes, previous: bytes) -> bool:
    """True when `key` is the link revealed after `previous`: SHA-256(key) == previous."""
    return hmac.compare_digest(_sha256(key), previous)


def hash_back(key: bytes, times: int) -> bytes:
    """SHA-256 applied `times` times: from k[i], k[i - times] (k[0], the commitment, for
    times = i)."""
    for _ in range(times):
        key = _sha256(key)
    return key


def hidden_key(seed: bytes) -> bytes:
    """h = HMAC-SHA256(seed, "pbem/hidden"): keys card draws; revealed when the game ends."""
    return _hmac(seed, b"pbem/hidden")


def order_file_digest(canonical: str) -> bytes:
    """SHA-256 of one order file as pbem writes it back (docs/dice.md, "Dice from the key and
    the orders"): the same orders give the same digest however the player spelt them."""
    return _sha256(canonical.encode("utf-8"))


def orders_digest(files: Sequence[bytes]) -> bytes:
    """D: SHA-256 of the order files' digests one after the other, in seat order."""
    return _sha256(b"".join(files))


def again_salt(hidden: bytes, resolution: int, digest: bytes) -> bytes:
    """t = HMAC-SHA256(h, "pbem/again/" || r || "/" || hex(D)): what a resolution played again
    after an undo with other orders than the first time adds to its dice key, so that nobody
    who saw the first key can foresee the new dice. Checked with the card key at the end."""
    return _hmac(hidden, b"pbem/again/%d/" % resolution + digest.hex().encode())


def dice_key(key: bytes, digest: bytes, again: bytes | None = None) -> bytes:
    """The key of a resolution's dice under the rule of the orders: HMAC-SHA256(k[r+1],
    "pbem/orders/" || hex(D)), with "/" || hex(t) after it when the resolution was played again
    with other orders (`again`, from `again_salt`)."""
    label = b"pbem/orders/" + digest.hex().encode()
    if again is not None:
        label += b"/" + again.hex().encode()
    return _hmac(key, label)


def hidden_commitment(seed: bytes) -> bytes:
    """SHA-256(h), published at the start so that h can be checked when it is revealed."""
    return _sha256(hidden_key(seed))


# A byte b of the stream as a die: b % 6 + 1, or 0 for the bytes randbelow(6) skips (b >= 252).
_DIE_OF_BYTE = bytes(b % 6 + 1 if b < 252 else 0 for b in range(256))


class Stream:
    """An endless sequence of bytes made of keyed blocks, with rejection-sampled draws."""

    def __init__(self, block: Callable[[int], bytes]) -> None:
        self._block = block
        self._index = 0
        self._buffer = b""
        self._faces = b""  # the buffer decoded as dice at once (_DIE_OF_BYTE), 0 where skipped
        self._pos = 0

    @classmethod
    def public(cls, key: bytes) -> Stream:
        """The public stream: HMAC-SHA256(K, "pbem/dice/" || i) for i = 0, 1, 2, ..."""
        return cls(lambda i: _hmac(key, b"pbem/dice/%d" % i))

    @classmethod
    def hidden(cls, hidden: bytes, resolution: int, digest: bytes | None = None) -> Stream:
        """The hidden stream of a resolution: HMAC-SHA256(h, "pbem/hidden/" || r || "/" || i);
        under the rule of the orders, HMAC-SHA256(h, "pbem/hidden/" || r || "/" || hex(D) ||
        "/" || i), D the digest of the orders it resolves."""
        if digest is None:
            return cls(lambda i: _hmac(hidden, b"pbem/hidden/%d/%d" % (resolution, i)))
        label = b"pbem/hidden/%d/" % resolution + digest.hex().encode() + b"/"
        return cls(lambda i: _hmac(hidden, label + b"%d" % i))

    @classmethod
    def missions(cls, hidden: bytes) -> Stream:
        """The stream that deals the secret missions at setup: HMAC-SHA256(h, "pbem/missions/"
        || i). A label of its own, so it never shares bytes with a resolution's card draws."""
        return cls(lambda i: _hmac(hidden, b"pbem/missions/%d" % i))

    def byte(self) -> int:
        """The next byte of the stream."""
        if self._pos == len(self._buffer):
            self._next_block()
        value = self._buffer[self._pos]
        self._pos += 1
        return value

    def _next_block(self, blocks: int = 1) -> None:
        """Append the next `blocks` blocks to the bytes not read yet (and their faces to
        theirs)."""
        if blocks == 1:
            block = self._block(self._index)
        else:
            block = b"".join(self._block(self._index + i) for i in range(blocks))
        self._index += blocks
        self._buffer = self._buffer[self._pos :] + block
        self._faces = self._faces[self._pos :] + block.translate(_DIE_OF_BYTE)
        self._pos = 0

    def randbelow(self, n: int) -> int:
        """A uniform number in 0..n-1 (1 <= n <= 256); bytes >= 256 - 256 % n are skipped."""
        if not 1 <= n <= 256:
            raise ValueError(f"randbelow needs 1 <= n <= 256, not {n}")
        limit = 256 - (256 % n)
        while True:
            b = self.byte()
            if b < limit:
                return b % n

    def die(self) -> int:
        """One six-sided die: randbelow(6) + 1, read from the block decoded at once."""
        while True:
            if self._pos == len(self._buffer):
                self._next_block()
            face = self._faces[self._pos]
            self._pos += 1
            if face:
                return face

    def dice(self, count: int) -> tuple[int, ...]:
        """`count` dice, in the order rolled: the same dice as `die()` called `count` times."""
        return tuple(self.faces(count))

    def faces(self, count: int) -> bytes:
        """`count` dice as bytes (one face, 1 to 6, per byte), in the order rolled: the same
        dice as `dice(count)`, read from the blocks decoded at once. When none of the next
        `count` bytes is skipped (nearly always for a few dice), one slice gives them all;
        otherwise the skipped bytes are counted and taken out, up to the `count`-th die."""
        pos = self._pos
        chunk = self._faces[pos : pos + count]
        if len(chunk) == count and 0 not in chunk:
            self._pos = pos + count
            return chunk
        while (have := len(self._faces) - self._pos - self._faces.count(0, self._pos)) < count:
            self._next_block((count - have) // 32 + 1)
        pos, faces = self._pos, self._faces
        # The shortest stretch from pos holding `count` dice: `count` bytes and the skipped
        # ones among them (counted again as the stretch grows, until it holds no more).
        end = pos + count
        while (grown := pos + count + faces.count(0, pos, end)) != end:
            end = grown
        self._pos = end
        return faces[pos:end].replace(b"\0", b"")

    def shuffle(self, items: Sequence[str]) -> tuple[str, ...]:
        """Fisher-Yates from the last position down: swap i with randbelow(i + 1)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.randbelow(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out)


def check_rolls(key: bytes, rolls: Iterable[tuple[Sequence[int], Sequence[int]]]) -> int | None:
    """Recompute a play resolution's battle dice from its key.

    `rolls` are (attacker, defender) dice in the order rolled. Returns None when every die
    matches the stream, otherwise the index of the first roll that differs.
    """
    stream = Stream.public(key)
    for index, (attacker, defender) in enumerate(rolls):
        if tuple(attacker) != stream.dice(len(attacker)):
            return index
        if tuple(defender) != stream.dice(len(defender)):
            return index
    return None
