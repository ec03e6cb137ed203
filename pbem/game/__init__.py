"""A game on disk and what a moderator does to it: the store, the turn processor."""
