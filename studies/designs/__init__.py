"""Every commit design on each store, side by side (``capacity --compare``), kept as data."""
