"""Assay's loggers: every one scrubs secrets from what it logs.

Example:
    >>> from assay.judges.secrets import register_secret
    >>> register_secret("sk-test-1234567890abcdef")
    >>> log = get_logger("assay.example")
    >>> any(type(f).__name__ == "RedactingFilter" for f in log.filters)
    True
"""

from __future__ import annotations

import logging


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` with the redacting filter attached once."""
    # Imported here: the judges package itself logs through this module.
    from assay.judges.secrets import RedactingFilter

    logger = logging.getLogger(name)
    if not any(isinstance(f, RedactingFilter) for f in logger.filters):
        logger.addFilter(RedactingFilter())
    return logger
