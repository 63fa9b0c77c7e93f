"""The table of ``assay cache stats``."""

from __future__ import annotations

from typing import Any


def cache_table(stats: Any, *, expired: bool) -> Any:
    """Entries (and the expired ones, when a TTL is given), size, lifetime hits and misses, and
    the entries per model."""
    from rich.table import Table

    table = Table(title=f"cache {stats.path}", show_header=False)
    table.add_row("entries", str(stats.entries))
    if expired:
        table.add_row("expired", str(stats.expired))
    table.add_row("size", f"{stats.size_bytes / 1024:.1f} KiB")
    table.add_row("hits (lifetime)", str(stats.lifetime_hits))
    table.add_row("misses (lifetime)", str(stats.lifetime_misses))
    for model, count in sorted(stats.by_model.items()):
        table.add_row(f"  model {model}", str(count))
    return table
