"""What keeps other web sites out of ``assay review``: Host allow-list, sessions and CSRF checks.

A reviewer's browser visits other sites while the app runs on loopback with no token, so the
app trusts nothing a browser sends on its own:

* **Host allow-list.** A request whose ``Host`` is not a name this server answers to (the
  loopback names, the bound address, ``--allow-host`` names) is refused with 421, so a page
  whose DNS name is rebound to 127.0.0.1 cannot read the app or post to it.
* **Sessions.** Each browser gets a signed session cookie (HttpOnly, SameSite=Strict) holding a
  random id and, once known, the reviewer's name. The name comes from ``--reviewer`` or the
  login page, never from a form field of the write itself. The signing key is random per
  server process: a restart logs every browser out.
* **CSRF.** Every write (POST) must carry the session's token (a hidden ``csrf`` field that
  only the app's own pages contain, or an ``X-CSRF-Token`` header), and a browser's
  ``Sec-Fetch-Site`` and ``Origin`` headers, when sent, must say the request came from the
  app's own origin. ``same-site`` is refused too: another port on localhost is the same site.

Example:
    >>> sessions = Sessions(b"k" * 32)
    >>> cookie = sessions.encode(Session("abc", "dr_a"))
    >>> sessions.decode(cookie)
    Session(id='abc', reviewer='dr_a')
    >>> sessions.decode(cookie[:-1] + "0") is None    # a forged signature is no session
    True
    >>> host_name("[::1]:8765"), host_name("LocalHost.:80")
    ('::1', 'localhost')
    >>> reviewer_name("  dr_a ")
    'dr_a'
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from assay.errors import InputError

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Sec-Fetch-Site values of a request the app's own pages make (or a typed address: "none").
OWN_FETCH_SITES = frozenset({"same-origin", "none"})
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
MAX_REVIEWER = 100


@dataclass(frozen=True)
class Session:
    """A browser's session: a random id and the reviewer's name once they have logged in."""

    id: str
    reviewer: str | None = None


class Sessions:
    """Signs and reads session cookies, and derives each session's CSRF token, with one key."""

    def __init__(self, key: bytes | None = None):
        self._key = key or secrets.token_bytes(32)

    def new(self, reviewer: str | None = None) -> Session:
        return Session(secrets.token_urlsafe(18), reviewer)

    def encode(self, session: Session) -> str:
        name = base64.urlsafe_b64encode((session.reviewer or "").encode()).decode()
        body = f"{session.id}.{name}"
        return f"{body}.{self._sign(body)}"

    def decode(self, cookie: str | None) -> Session | None:
        """The session a cookie holds, or None if it is missing, malformed or forged."""
        if not cookie or cookie.count(".") != 2:
            return None
        sid, name, signature = cookie.split(".")
        if not hmac.compare_digest(signature, self._sign(f"{sid}.{name}")):
            return None
        try:
            reviewer = base64.urlsafe_b64decode(name.encode()).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        return Session(sid, reviewer or None)

    def csrf(self, session: Session) -> str:
        return self._sign(f"csrf:{session.id}")

    def csrf_ok(self, session: Session, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(str(sent), self.csrf(session))

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()[:43]


def host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port, lower case, no trailing dot."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8765
        host = host[1:host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def allowed_hosts(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server bound to ``bind_host`` answers to: the loopback names, the
    bound address, and ``extra`` (``--allow-host``). Bound to every interface, it also answers
    to this machine's own names; other names (an IP address, a DNS alias) are ``extra``."""
    names = set(LOOPBACK_NAMES) | {host_name(h) for h in extra if h.strip()}
    if bind_host in WILDCARD_HOSTS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    else:
        names.add(host_name(bind_host))
    return frozenset(names)


def cross_origin_reason(host_header: str, sec_fetch_site: str | None,
                        origin: str | None) -> str | None:
    """Why a write is refused as coming from another site, or None when the headers a browser
    sends (when it sends them) say it came from the app's own page."""
    if sec_fetch_site is not None and sec_fetch_site.lower() not in OWN_FETCH_SITES:
        return f"Sec-Fetch-Site is {sec_fetch_site[:30]!r}: writes come only from the app's own pages"
    if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower()
                               != host_header.strip().lower()):
        return f"Origin {origin[:100]!r} is not this server: writes come only from its own pages"
    return None


def reviewer_name(value: object) -> str:
    """A reviewer's name as stored with each label: 1 to 100 printable characters."""
    name = str(value or "").strip()
    if not name:
        raise InputError("a reviewer name is required")
    if len(name) > MAX_REVIEWER:
        raise InputError(f"a reviewer name is at most {MAX_REVIEWER} characters")
    if not name.isprintable():
        raise InputError("a reviewer name holds only printable characters")
    return name
