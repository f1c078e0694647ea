"""shuffledp.experiments."""
