"""Transitional: the jobs contract moved to :mod:`shuffledp.stages.jobs`; the stages not yet moved
to ``shuffledp.stages`` import it from here until they do."""

from shuffledp.stages.jobs import Job, JobTable, Ref, batch_ranges, canonical, num

__all__ = ["Job", "JobTable", "Ref", "batch_ranges", "canonical", "num"]
