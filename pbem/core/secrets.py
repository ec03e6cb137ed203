"""The players' secrets, derived from the game's seed: each order file carries its player's
secret, which tells the moderator's pbem that the orders are theirs (docs/orders.md). The first
holder of a seat and every substitute after them have each their own."""

from __future__ import annotations

import hmac


def first_secret(seed: bytes, seat: str) -> str:
    """The secret of a seat's first player, derived from the seed (every game made so far)."""
    digest = hmac.new(seed, b"pbem/secret/" + seat.encode(), "sha256").digest()
    return digest[:12].hex()


def holder_secret(seed: bytes, seat: str, holders: int, holder: str) -> str:
    """The secret of a seat's substitute: HMAC-SHA256(seed, "pbem/secret/" || seat || "/" ||
    n || "/" || holder), the first 12 bytes in hex, n the number of players who held the seat
    before them (1 for the first substitute). Each holder of a seat has their own."""
    label = f"pbem/secret/{seat}/{holders}/{holder}".encode()
    return hmac.new(seed, label, "sha256").digest()[:12].hex()
