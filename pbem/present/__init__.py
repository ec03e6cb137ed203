"""What people read: the views, reports and the player's verifier."""
