"""Official benchmark files, downloaded on request (``assay data fetch``) and checked.

Nothing downloads by itself: :func:`fetch` is the one download, run when the user asks; every
other command reads the local copy (:func:`local_copy`) and names the fetch command when it is
missing. A file is kept only if it holds what the official file holds (rows, unique ids, schema:
:mod:`assay.datasets.content`) and its SHA-256 is the one expected (the user's ``sha256``, or
the one the project's lock file recorded on first use: :mod:`assay.datasets.lock`); a truncated
or corrupted download is refused, retried, and never used.
"""

from assay.datasets.fetch import data_dir, fetch, local_copy
from assay.datasets.lock import LOCK_NAME, DataLock, lock_path
from assay.datasets.registry import DATASETS, EVAL_SUBSETS, DataFile, data_file

__all__ = ["DATASETS", "EVAL_SUBSETS", "LOCK_NAME", "DataFile", "DataLock", "data_dir",
           "data_file", "fetch", "local_copy", "lock_path"]
