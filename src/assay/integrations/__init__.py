"""Adapters to the tools users already run, each behind its optional extra.

* :mod:`assay.integrations.inspect` (extra ``inspect``): an Inspect AI scorer grading each
  sample with Assay (``rubric_scorer``), Inspect logs read as items (``assay grade
  --inspect-log``) and Assay runs written as Inspect logs (``assay export --inspect``);
* :mod:`assay.integrations.verifiers` (extra ``verifiers``): a ``verifiers`` rubric backed by
  Assay's reward scorer, for GRPO in a verifiers environment.

Nothing here is imported by ``import assay``; each module imports its framework.
"""
