"""Joining a Ray cluster that has token authentication on (the default of new heads).

Ray turns token authentication on for a head started with ``ray start --head`` wherever a token
exists (``~/.ray/auth_token``, which any local ``ray.init()`` writes, ``$RAY_AUTH_TOKEN`` or
``$RAY_AUTH_TOKEN_PATH``), and a driver joining it by address must then send that token. Ray
itself only sends one when ``RAY_AUTH_MODE=token`` is set, and a driver without it retries for
20 s and fails with "Failed to connect", hiding the cause.

Assay uses Ray's own variables: a token given in ``$RAY_AUTH_TOKEN`` or ``$RAY_AUTH_TOKEN_PATH``
is sent (``RAY_AUTH_MODE=token`` is set for this process when unset); the default file
``~/.ray/auth_token`` is sent only with ``RAY_AUTH_MODE=token``, so a local token never goes to
another cluster unasked. Before joining, :func:`check_cluster_access` asks the head's GCS once:
nothing listening, or a missing or wrong token, is a :class:`~assay.errors.ConfigError` that
says so at once (the token itself is never in a message).

Example:
    >>> token_given({"RAY_AUTH_TOKEN": "t0k3n"}), token_given({})
    (True, False)
    >>> gcs_host_port("10.0.0.5:6379"), gcs_host_port("auto"), gcs_host_port("ray://h:10001")
    (('10.0.0.5', 6379), None, None)
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from assay.errors import ConfigError

AUTH_MODE_VAR = "RAY_AUTH_MODE"
TOKEN_VARS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
CONNECT_TIMEOUT_S = 5.0
HOW_TO = ("give the head's token (print it on the head with `ray get-auth-token`) as "
          "RAY_AUTH_TOKEN=..., or its file as RAY_AUTH_TOKEN_PATH=FILE, to assay and to every "
          "`ray start --address` node")


def token_given(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the user handed Ray a token explicitly (not just the default file)."""
    return any(environ.get(var) for var in TOKEN_VARS)


def gcs_host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` cluster address; None for ``auto``, ``local`` or a
    Ray Client ``ray://`` address (Ray resolves those itself)."""
    if "://" in address or address in ("auto", "local"):
        return None
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def send_token_if_given(ray: Any) -> None:
    """Set ``RAY_AUTH_MODE=token`` for this process when a token was given and no mode was,
    and make Ray (already imported) read it again."""
    if os.environ.get(AUTH_MODE_VAR) is not None or not token_given():
        return
    os.environ[AUTH_MODE_VAR] = "token"
    try:  # Ray caches its config at import: reload it, as ray.init does for a new cluster
        from ray._raylet import Config  # type: ignore[attr-defined]  # (no stub for it)

        Config.initialize("")
    except (ImportError, AttributeError):  # a Ray without token auth: nothing to reload
        pass


def check_cluster_access(ray: Any, address: str) -> None:
    """Fail at once, saying why, when nothing listens at ``address`` or its head refuses this
    driver's token; do nothing for addresses Ray resolves itself or a Ray without auth."""
    target = gcs_host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ConfigError(f"--ray-address {address}: nothing answers there ({exc.strerror or exc}); "
                          "is the head started (`ray start --head --port PORT`) and reachable?"
                          ) from None
    try:
        from ray._raylet import GcsClient  # type: ignore[attr-defined]  # (no stub for it)
    except ImportError:
        return
    authentication_error = getattr(ray.exceptions, "AuthenticationError", None)
    if authentication_error is None:
        return
    try:
        GcsClient(address=f"{target[0]}:{target[1]}")
    except authentication_error:
        raise ConfigError(refused_message(address)) from None
    except (ray.exceptions.RayError, RuntimeError, OSError, ValueError):
        return  # anything else: ray.init reports it in its own words


def refused_message(address: str) -> str:
    """What a driver refused by the head's token authentication is told (no token in it)."""
    mode = os.environ.get(AUTH_MODE_VAR)
    if token_given():
        sent = "the token in " + " / ".join(v for v in TOKEN_VARS if os.environ.get(v))
        what = f"refused {sent} (Ray's InvalidAuthToken): it is not the head's token"
    elif mode == "token":
        what = ("refused the token in ~/.ray/auth_token (Ray's InvalidAuthToken): it is not "
                "the head's token")
    else:
        what = ("has token authentication on and this driver sent no token (Ray's "
                "InvalidAuthToken; new heads turn it on by default)")
    return f"--ray-address {address}: the Ray cluster {what}: {HOW_TO}"
