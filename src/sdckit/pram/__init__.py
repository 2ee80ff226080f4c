"""sdckit.pram."""
