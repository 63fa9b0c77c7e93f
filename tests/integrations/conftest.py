"""The integrations' tests: Inspect AI and verifiers run in-process, against Assay's fake judge
on loopback. Nothing may leave the machine: every connection to an address off loopback fails
the test that makes it (Inspect's and verifiers' providers must point at the fake server)."""

from __future__ import annotations

import hashlib
import ipaddress
import socket

import pytest

_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address, *args, **kwargs):
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise AssertionError(f"a test tried to reach {address} off loopback")
    return _connect(self, address, *args, **kwargs)


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """Loopback only; Inspect's and Hugging Face's caches and logs inside the test's folder."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("INSPECT_TELEMETRY", "")


def hashed_verdict(view) -> str:
    """A fake judge's verdict fixed by the criterion's text: about half MET, penalties too."""
    text = view.criterion_text or ""
    return "MET" if hashlib.sha256(text.encode()).digest()[0] % 2 else "UNMET"
