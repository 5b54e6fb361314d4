"""Pluribus-style blueprints of two-player hold'em: MCCFR on a bucketed abstract game.

Brown and Sandholm, "Superhuman AI for multiplayer poker" (Science 2019), supplement
Algorithm 1, on `sog.games.holdem.Holdem` with the card abstraction of
`sog.games.holdem.buckets`:

The parts: `settings`, `abstraction` (the abstract game), `world_mccfr` (the world-tree solver),
`translation` (the blueprint in the real game), `files` (checkpoints and blueprint files), and the sampled-deal
solvers `sampled_mccfr` / `sampled_uct` with their numba kernels.
"""
