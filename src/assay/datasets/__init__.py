"""Official benchmark files, downloaded on request (``assay data fetch``) and checked.

Nothing downloads by itself: :func:`fetch` is the one download, run when the user asks; every
other command reads the local copy (:func:`local_copy`) and names the fetch command when it is
missing. A file is kept only if its size and SHA-256 match a pin (Assay's own, or the user's
``sha256``); a truncated or corrupted download is refused, retried, and never used.
"""

from assay.datasets.fetch import data_dir, fetch, local_copy
from assay.datasets.registry import DATASETS, DataFile, data_file

__all__ = ["DATASETS", "DataFile", "data_dir", "data_file", "fetch", "local_copy"]
