"""sdckit.report."""
