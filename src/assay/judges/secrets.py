"""Keeping API keys out of reprs, logs, cache rows and exception messages.

Keys are read only from environment variables or a config file, wrapped in :class:`Secret`
(whose repr and str are masked) and registered so that :func:`redact` can scrub them from any
text that leaves the judges layer: failure messages, log records, raw replies.

Example:
    >>> s = Secret("sk-abc123456789")
    >>> repr(s), str(s)
    ("Secret('****')", '****')
    >>> redact("bad key sk-abc123456789 rejected")
    'bad key [REDACTED] rejected'
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

_REGISTERED: set[str] = set()
_LOCK = threading.Lock()
_PATTERN: re.Pattern[str] | None = None
# Bearer/Basic credentials, common key shapes and URL passwords are scrubbed even if they were
# never registered.
_GENERIC = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}|(basic\s+)[A-Za-z0-9+/]{8,}=*"
                      r"|\bsk-(?:ant-)?[A-Za-z0-9_\-]{8,}|(://[^/\s:@\[\]]*:)[^/\s@]+(?=@)")
MIN_SECRET_LENGTH = 4
# Header values and URL passwords are scrubbed from free text (an echoed explanation) only from
# this length on; where they sit in a URL or a credential header they are always redacted.
CONFIG_SECRET_MIN_LENGTH = 8


class Secret:
    """A string that never shows itself: use :meth:`reveal` where the value is truly needed."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value
        register_secret(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('****')"

    __str__ = lambda self: "****"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self):  # pickling would write the value somewhere: refuse.
        raise TypeError("a Secret cannot be pickled")


def register_secret(value: str, min_length: int = MIN_SECRET_LENGTH) -> None:
    """Remember a secret value so that :func:`redact` removes it from text (values shorter than
    ``min_length`` are not: scrubbing them would mangle ordinary words)."""
    global _PATTERN
    if not value or len(value) < max(min_length, MIN_SECRET_LENGTH):
        return
    with _LOCK:
        if value in _REGISTERED:
            return
        _REGISTERED.add(value)
        ordered = sorted(_REGISTERED, key=len, reverse=True)
        _PATTERN = re.compile("|".join(re.escape(v) for v in ordered))


def redact(text: str) -> str:
    """Replace every registered secret and any bearer token / ``sk-`` key in ``text``."""
    if not text:
        return text
    pattern = _PATTERN
    if pattern is not None:
        text = pattern.sub("[REDACTED]", text)
    if not _may_hold_generic(text):
        return text
    return _GENERIC.sub(scrub_generic, text)


def scrub_generic(match: re.Match[str]) -> str:
    """What a match of :data:`_GENERIC` becomes: its prefix and ``[REDACTED]``; but ``basic``
    and a word is kept unless the word is Basic credentials (base64 of ``user:password``), so
    that "Basic diagnostic tests" in a model's reply survives.

    >>> redact("Basic diagnostic tests; Authorization: Basic QWxhZGRpbjpvcGVu")
    'Basic diagnostic tests; Authorization: Basic [REDACTED]'
    """
    if match.group(2) is not None and not _basic_credentials(match.group(0)[len(match.group(2)):]):
        return match.group(0)
    return (match.group(1) or match.group(2) or match.group(3) or "") + "[REDACTED]"


def _basic_credentials(token: str) -> bool:
    try:
        decoded = base64.b64decode(token, validate=True)
    except ValueError:
        return False
    return b":" in decoded


def _may_hold_generic(text: str) -> bool:
    """False only if :data:`_GENERIC` cannot match ``text``: every match holds ``bearer``,
    ``basic`` or ``sk-`` (in any case) or ``://``. Only ASCII text is ruled out this way (a
    case-insensitive pattern also matches some non-ASCII letters, e.g. the Kelvin sign as k);
    one ``lower`` and four scans cost a tenth of the pattern on a judge's typical reply."""
    if not text.isascii():
        return True
    low = text.lower()
    return "sk-" in low or "bearer" in low or "basic" in low or "://" in low


SENSITIVE_HEADER = re.compile(
    r"(?i)auth|key|token|secret|cookie|passw|session|signature|credential")


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """A copy of ``headers`` with credential-looking values replaced."""
    return {k: ("[REDACTED]" if SENSITIVE_HEADER.search(k) else redact(v)) for k, v in headers.items()}


def redact_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with :func:`redact` applied to every string,
    e.g. a parsed reply whose explanation echoes a key."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


def url_credentials(url: str) -> tuple[str, Secret | None]:
    """``url`` without its ``user:password@`` part, and the matching ``Basic`` Authorization
    value (registered as a secret, as are the password and ``user:password``).

    >>> url_credentials("http://me:pa55word@host:8000/v1")[0]
    'http://host:8000/v1'
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    register_secret(password, CONFIG_SECRET_MIN_LENGTH)
    register_secret(f"{user}:{password}")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    bare = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return urlunsplit(bare), Secret("Basic " + token)


def register_config_secrets(api_key: str | None, headers: dict[str, str], base_url: str) -> None:
    """Register every secret a judge config holds: its key, credential-looking header values
    and a password in its URL, so that nothing written later can contain them."""
    if api_key:
        register_secret(api_key)
    for name, value in headers.items():
        if SENSITIVE_HEADER.search(name):
            register_secret(value, CONFIG_SECRET_MIN_LENGTH)
            register_secret(value.split(" ", 1)[-1], CONFIG_SECRET_MIN_LENGTH)  # "Bearer KEY" too
    url_credentials(base_url)


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs secrets from the message and its arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001  a bad format string must still not leak anything
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        return True
