"""Starting or joining Ray quietly: no usage statistics, no dashboard, Ray an optional extra.

``ensure_ray(address, num_cpus)`` returns the imported ``ray`` module with a connection open:
the one already open in this process, a cluster's (``address="HOST:6379"``, ``"auto"``), or a
new local instance sized by ``num_cpus``. Joining a cluster whose head has token
authentication on (the default of new heads) takes the head's token from Ray's own
``$RAY_AUTH_TOKEN`` or ``$RAY_AUTH_TOKEN_PATH`` (:mod:`assay.distributed.ray_auth`); a missing
or wrong token, a token file that cannot be read, ``RAY_AUTH_MODE=token`` with no token, or no
head at the address, is one clear error at once, never Ray's native stack dump. Usage statistics are switched off before Ray is
imported (``RAY_USAGE_STATS_ENABLED=0``), so neither the driver nor the workers it starts ever
report home; the dashboard is not started.

Example:
    >>> import os
    >>> quiet_environment(); os.environ["RAY_USAGE_STATS_ENABLED"]
    '0'
"""

from __future__ import annotations

import os
import sys
from typing import Any

from assay.distributed.ray_auth import (
    check_cluster_access,
    check_ray_setup,
    refused_message,
    send_token_if_given,
)
from assay.errors import ConfigError

INSTALL_HINT = "pip install 'assay[distributed]'  (Ray is an optional extra)"
# Small by default: the driver only streams judge replies, never large objects.
OBJECT_STORE_BYTES = 96 * 1024 * 1024


def quiet_environment() -> None:
    """Environment Ray reads at import and start-up: no usage stats, no telemetry prompts."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_PROMPT_ENABLED", "0")
    os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")


def import_ray() -> Any:
    quiet_environment()
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--executor ray needs Ray: {INSTALL_HINT}") from None
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> Any:
    """The ``ray`` module, connected (see the module doc). A connection already open in this
    process is reused as it is (a test session, a notebook, a caller's own ``ray.init``)."""
    loaded = sys.modules.get("ray")
    if loaded is not None and loaded.is_initialized():
        return loaded
    check_ray_setup(address)  # before Ray is imported: what its C++ layer would crash on
    ray = import_ray()
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "warning",
                              "log_to_driver": False}
    if address:
        kwargs["address"] = address
        send_token_if_given(ray)
        check_cluster_access(ray, address)
    else:
        kwargs["address"] = "local"  # never join a stranger's cluster by accident
        kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
        kwargs["object_store_memory"] = OBJECT_STORE_BYTES
    refused = getattr(ray.exceptions, "AuthenticationError", ())
    try:
        ray.init(**kwargs)
    except refused:
        raise ConfigError(refused_message(str(address))) from None
    except ConnectionError as exc:
        raise ConfigError(f"--ray-address {address}: cannot join the Ray cluster ({exc})") from None
    return ray
