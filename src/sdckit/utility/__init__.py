"""sdckit.utility."""
