"""Former keyword names of run options, still accepted where the README once showed them.

    >>> renamed("abstention", None, "abstain", "zero")
    'zero'
"""

from __future__ import annotations

from typing import Any


def renamed(name: str, value: Any, old: str, old_value: Any) -> Any:
    """``value``, or ``old_value`` given under the former name ``old``; both is an error."""
    if old_value is None:
        return value
    if value is not None:
        raise TypeError(f"give {name}= only ({old}= is its former name)")
    return old_value
