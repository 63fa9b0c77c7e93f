"""Sampling the model under test: one free-text answer per item (or ``n``), resumably.

:func:`sample` / :func:`asample` run the job (:mod:`assay.sampling.job`); the system prompt comes
from a file or a named condition (:mod:`assay.sampling.conditions`). The output feeds
``assay grade --responses``.
"""

from assay.sampling.conditions import (
    SAMPLING_CONDITIONS,
    SystemPrompts,
    render_handbook,
    system_prompts,
)
from assay.sampling.job import SampleResult, asample, sample, sample_id, write_samples

__all__ = ["SAMPLING_CONDITIONS", "SampleResult", "SystemPrompts", "asample", "render_handbook",
           "sample", "sample_id", "system_prompts", "write_samples"]
