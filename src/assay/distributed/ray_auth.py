"""Joining a Ray cluster that has token authentication on (the default of new heads).

Ray turns token authentication on for a head started with ``ray start --head`` wherever a token
exists (``~/.ray/auth_token``, which any local ``ray.init()`` writes, ``$RAY_AUTH_TOKEN`` or
``$RAY_AUTH_TOKEN_PATH``), and a driver joining it by address must then send that token. Ray
itself only sends one when ``RAY_AUTH_MODE=token`` is set, and a driver without it retries for
20 s and fails with "Failed to connect", hiding the cause.

Assay uses Ray's own variables: a token given in ``$RAY_AUTH_TOKEN`` or ``$RAY_AUTH_TOKEN_PATH``
is sent (``RAY_AUTH_MODE=token`` is set for this process when unset); the default file
``~/.ray/auth_token`` is sent only with ``RAY_AUTH_MODE=token``, so a local token never goes to
another cluster unasked. Before Ray is even imported, :func:`check_ray_setup` finds the
set-up Ray would crash on in its C++ layer (a 60-line native stack): ``RAY_AUTH_MODE=token``
with no token to send, a ``RAY_AUTH_TOKEN_PATH`` that cannot be read or is empty; and nothing
listening at the address. Before joining, :func:`check_cluster_access` asks the head's GCS
once: a missing or wrong token. Each is one :class:`~assay.errors.ConfigError` that says
which, at once (the token itself is never in a message).

Example:
    >>> token_given({"RAY_AUTH_TOKEN": "t0k3n"}), token_given({})
    (True, False)
    >>> gcs_host_port("10.0.0.5:6379"), gcs_host_port("auto"), gcs_host_port("ray://h:10001")
    (('10.0.0.5', 6379), None, None)
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
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


def check_ray_setup(address: str | None, environ: Mapping[str, str] = os.environ,
                    home: Path | None = None) -> None:
    """Raise a :class:`ConfigError` saying which, before Ray is imported, for a set-up Ray
    would crash on or retry for 20 s: a ``RAY_AUTH_TOKEN_PATH`` that cannot be read or is
    empty; ``RAY_AUTH_MODE=token`` with no token at all when joining a cluster at ``address``
    (a new local instance, None, writes its own token); nothing listening at ``address``.
    ``home``: where ``.ray/auth_token`` is looked for (default: ~).

    >>> check_ray_setup(None, {"RAY_AUTH_MODE": "token"}, home=Path("/nonexistent"))  # local: fine
    >>> check_ray_setup("10.0.0.5:6379", {"RAY_AUTH_MODE": "token"}, home=Path("/nonexistent"))
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: RAY_AUTH_MODE=token, but there is no token to send ...
    """
    path = environ.get("RAY_AUTH_TOKEN_PATH")
    if path:
        try:
            token = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"RAY_AUTH_TOKEN_PATH={path}: the token file cannot be read "
                              f"({exc.strerror or exc}): {HOW_TO}") from None
        if not token.strip():
            raise ConfigError(f"RAY_AUTH_TOKEN_PATH={path}: the token file is empty: {HOW_TO}")
    joining = address not in (None, "local")
    if (joining and (environ.get(AUTH_MODE_VAR) or "").lower() == "token"
            and not token_given(environ) and not _default_token(home)):
        raise ConfigError(f"RAY_AUTH_MODE=token, but there is no token to send (none in "
                          f"RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) to join "
                          f"the Ray cluster at {address}: {HOW_TO}")
    if joining and address is not None and (target := gcs_host_port(address)) is not None:
        try:
            socket.create_connection(target, timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise ConfigError(f"--ray-address {address}: nothing answers there "
                              f"({exc.strerror or exc}); is the head started (`ray start "
                              "--head --port PORT`) and reachable?") from None


def _default_token(home: Path | None) -> bool:
    """Whether Ray's default token file (``~/.ray/auth_token``) holds a token."""
    try:
        return bool(((home or Path.home()) / ".ray" / "auth_token").read_text().strip())
    except (OSError, RuntimeError, UnicodeDecodeError):  # none, unreadable, or no home at all
        return False


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
    """Fail at once, saying why, when the head at ``address`` refuses this driver's token (ask
    its GCS once); do nothing for addresses Ray resolves itself or a Ray without auth."""
    target = gcs_host_port(address)
    if target is None:
        return
    try:
        from ray._raylet import GcsClient  # type: ignore[attr-defined]  # (no stub for it)
    except ImportError:
        return
    authentication_error = getattr(ray.exceptions, "AuthenticationError", None)
    if authentication_error is None:
        return
    try:
        with _native_logs_silenced():  # Ray's C++ client logs the refusal on its own
            GcsClient(address=f"{target[0]}:{target[1]}")
    except authentication_error:
        raise ConfigError(refused_message(address)) from None
    except (ray.exceptions.RayError, RuntimeError, OSError, ValueError):
        return  # anything else: ray.init reports it in its own words


@contextmanager
def _native_logs_silenced() -> Iterator[None]:
    """Send what native code writes to stderr (file descriptor 2) to /dev/null meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


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
