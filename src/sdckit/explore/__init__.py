"""sdckit.explore."""
