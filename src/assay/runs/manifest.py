"""The run manifest (``manifest.json`` next to ``run.sqlite``) and the config hash.

The manifest says what a run was and how it went: the config and its hash, the master seed,
package versions, the judges (spec, model, endpoint and settings: never a key), timing (call
latency and item duration p50/p95, wall time, calls per second) and totals (items, calls,
cache hits, errors, tokens, dollars). It is rewritten at the end of every session of the run.

The config hash covers everything that changes a judge call or a score; resuming a run with a
different config is refused, naming each setting that changed (:func:`config_changes`).

Example:
    >>> config_changes({"grading": {"seed": 1}, "judges": ["a"]}, {"grading": {"seed": 2}, "judges": ["a"]})
    ['grading.seed: 1 -> 2']
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a job's manifest (assay sample) needs none of the run store
    from assay.runs.store import RunStore

PACKAGES = ("assay", "pydantic", "aiohttp", "httptools", "numpy", "scipy", "pandas", "pyarrow", "orjson", "rich")


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def config_changes(old: Any, new: Any, path: str = "") -> list[str]:
    """Human-readable differences between two configs (dotted paths)."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes = []
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in old:
                changes.append(f"{sub}: added ({_short(new[key])})")
            elif key not in new:
                changes.append(f"{sub}: removed (was {_short(old[key])})")
            else:
                changes += config_changes(old[key], new[key], sub)
        return changes
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new)) for c in config_changes(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: {_short(old)} -> {_short(new)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def package_versions() -> dict[str, str]:
    """Python's and the main packages' versions (looked up once per process: each lookup
    scans the installed distributions)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = _version(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            continue
    return tuple(versions.items())


def _version(distribution: metadata.Distribution) -> str:
    """``distribution.version``, read from the metadata's header lines: the full parse it does
    also reads the long description (≈1 ms for a package like pandas).

    >>> _version(metadata.distribution("pydantic")) == metadata.version("pydantic")
    True
    """
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    for line in text.splitlines():
        if not line:  # the end of the headers
            break
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return distribution.version


def _percentiles(values: list[float]) -> dict[str, float] | None:
    """p50, p95, mean, max and n of ``values``; the percentiles are NumPy's default (linear)
    ones, computed here so that writing a manifest does not import NumPy.

    >>> _percentiles([5.0, 1.0, 4.0, 2.0, 3.0])
    {'p50': 3.0, 'p95': 4.8, 'mean': 3.0, 'max': 5.0, 'n': 5}
    """
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    return {"p50": _linear_percentile(ordered, 50), "p95": _linear_percentile(ordered, 95),
            "mean": math.fsum(ordered) / len(ordered), "max": ordered[-1], "n": len(ordered)}


def _linear_percentile(ordered: list[float], q: float) -> float:
    """``numpy.percentile(ordered, q)`` (method "linear") of a sorted list, bit for bit:
    the same virtual index and the same two-sided interpolation NumPy uses."""
    index = (len(ordered) - 1) * (q / 100)
    below = math.floor(index)
    a = ordered[below]
    b = ordered[min(below + 1, len(ordered) - 1)]
    gamma = index - below
    return b - (b - a) * (1 - gamma) if gamma >= 0.5 else a + (b - a) * gamma


def write_manifest(store: RunStore, *, status: str, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Write ``manifest.json`` beside the store and return it."""
    config = store.config()
    totals = store.totals()
    wall = sum(s.get("wall_s", 0.0) for s in sessions)
    fresh_calls = sum(s.get("calls_made", 0) for s in sessions)
    versions = package_versions()
    manifest = {
        "assay_version": versions.get("assay"),
        "status": status,
        "config_hash": config_hash(config),
        "master_seed": config.get("grading", {}).get("seed"),
        "created_at": float(store.meta("created_at") or time.time()),
        "updated_at": time.time(),
        "packages": versions,
        "judges": config.get("judges", []),
        "config": config,
        "timing": {
            "wall_s": wall,
            "calls_per_s": fresh_calls / wall if wall else None,
            "call_latency_s": _percentiles(store.latencies()),
            "item_duration_s": _percentiles(store.item_durations()),
            "sessions": sessions,
        },
        "totals": vars(totals),
    }
    path = Path(store.path).parent / "manifest.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return manifest
