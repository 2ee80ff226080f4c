"""sdckit.masking."""
