"""shuffledp.datasets."""
