"""The club: what spans a root's games: standings, ratings, tournaments, its pages."""
