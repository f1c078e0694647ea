"""Figure captions: the run's data line once, at the end."""

from __future__ import annotations

from pathlib import Path

import shuffledp


def test_every_caption_ends_with_one_data_line():
    """A figure caption carries the run's data line once, as its last line (two used to repeat it)."""
    line = "Data of this run, from the records of the tables it was drawn from: {{ snakemake.params.data }}."
    stages = Path(shuffledp.__file__).resolve().parent / "stages"
    captions = [p for p in stages.glob("*/captions/*.rst") if line in p.read_text()]
    assert len(captions) >= 10
    for p in captions:
        text = p.read_text()
        assert text.count(line) == 1 and text.rstrip().endswith(line), p
