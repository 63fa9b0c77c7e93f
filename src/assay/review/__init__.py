"""Review: experts label verdicts and curate rubrics (``assay review RUN``).

* :class:`RunLabels` stores human labels in the run (``RUN/labels.sqlite``); ``assay agreement``
  and ``assay report`` read them.
* :func:`make_app` is the local web app; :func:`save_reviewed_rubric` writes a curated rubric
  as a new version with provenance.
"""

from assay.review.labels import Label, RunLabels
from assay.review.rubrics import RubricDecision, save_reviewed_rubric

__all__ = ["Label", "RubricDecision", "RunLabels", "make_app", "save_reviewed_rubric"]


def __getattr__(name: str):
    if name == "make_app":  # the web app pulls in aiohttp.web and jinja2: load it on demand
        from assay.review.app import make_app

        return make_app
    raise AttributeError(name)
