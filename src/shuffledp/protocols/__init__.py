"""shuffledp.protocols."""
