"""sdckit.io."""
