"""shuffledp: differential privacy in the shuffle model.

Subpackages, each small and named by what it holds:

- ``shuffledp.accountants``: privacy accountants (amplification bounds, conversions).
- ``shuffledp.mechanisms``: local randomizers.
- ``shuffledp.protocols``: end-to-end shuffle protocols and their estimators.
- ``shuffledp.datasets``: downloading, checksum verification and preprocessing to Parquet.
- ``shuffledp.tasks``: analysis tasks (frequency, marginals, range queries) and error metrics.
- ``shuffledp.experiments``: one function per experiment job of the workflow.
- ``shuffledp.plotting``: figures.

The package knows nothing of Snakemake; the workflow calls its CLI (``shuffledp ...``).
"""

__version__ = "0.1.0"
