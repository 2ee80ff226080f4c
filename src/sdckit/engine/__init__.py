"""sdckit.engine."""
