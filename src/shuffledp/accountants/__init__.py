"""shuffledp.accountants."""
