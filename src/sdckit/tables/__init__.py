"""sdckit.tables."""
