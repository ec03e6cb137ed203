"""The salted hash of a player's secret that their own view file carries, so that their own
check (`pbem check --view`) catches a wrong secret before the moderator does. Only the viewing
player's: no view holds anyone else's."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.core.orders import Orders
from pbem.errors import Problem

_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class SecretHash:
    """sha256(salt bytes + secret in UTF-8), both in hex; `player` is whose secret it is."""

    player: str
    salt: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return {"salt": self.salt, "sha256": self.sha256}

    def check(self, orders: Orders) -> Problem | None:
        """The problem with the secret of `orders`, or None when it is the player's."""
        if orders.player != self.player:
            return Problem.of(
                "these orders are signed by %(player)s, but the view is %(owner)s's: "
                "check them against %(player)s's view",
                orders.line_of("player"),
                player=orders.player,
                owner=self.player,
            )
        if hmac.compare_digest(_digest(bytes.fromhex(self.salt), orders.secret), self.sha256):
            return None
        return wrong_secret(orders)


def wrong_secret(orders: Orders) -> Problem:
    """The problem of orders whose secret is not their player's."""
    return Problem.of(
        "the secret is not %(player)s's: copy it from your latest report",
        orders.line_of("secret"),
        player=orders.player,
    )


def _digest(salt: bytes, secret: str) -> str:
    return hashlib.sha256(salt + secret.encode("utf-8")).hexdigest()


def secret_hash(seed: bytes, player: str, secret: str) -> SecretHash:
    """The hash for `player`'s view; the salt comes from the game's seed (one per player, the
    same in every report, so that a report rendered again is the same byte for byte)."""
    salt = hmac.new(seed, b"pbem/secret-salt/" + player.encode(), "sha256").digest()
    return SecretHash(player, salt.hex(), _digest(salt, secret))


def secret_hash_from_view(view: Mapping[str, Any]) -> SecretHash | None:
    """The hash a view file carries, or None (a view from before pbem wrote it, or the
    moderator's); a malformed one counts as none."""
    data, player = view.get("secret_check"), view.get("player")
    if not isinstance(data, dict) or not isinstance(player, str):
        return None
    salt, digest = data.get("salt"), data.get("sha256")
    if not (isinstance(salt, str) and isinstance(digest, str)):
        return None
    if not (_HEX.match(salt) and _HEX.match(digest)):
        return None
    return SecretHash(player, salt, digest)
