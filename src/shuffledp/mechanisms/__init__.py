"""shuffledp.mechanisms."""
