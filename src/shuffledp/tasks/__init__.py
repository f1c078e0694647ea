"""shuffledp.tasks."""
