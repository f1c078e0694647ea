"""shuffledp.plotting."""
