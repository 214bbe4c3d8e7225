"""Which skill fires: the routing runs, the repository's trigger matrix, the description
loop."""
