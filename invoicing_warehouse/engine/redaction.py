"""The one scrubber: every text that leaves the product (CLI output, errors raised to Dagster, dlt's trace) goes
through `redact` on its way out.

Two nets, because a secret can reach a message two ways:
- by value: each secret the process holds is registered when it is read (`register_secret`: the catalog's
  password in target.py, the API client secret and its Basic-auth form in credentials.py, bearer tokens in
  auth.py), and every occurrence is masked, whatever text surrounds it (DuckDB repeats the whole connection
  string in its ATTACH errors);
- by shape: `password=...` of a libpq string, the `user:password@` of a URL and an `Authorization` value are
  masked even when the secret was never registered (a DSN typed into an environment variable of another tool).

The registry lives as long as the process and only grows by secrets it holds anyway; bearer tokens are the one
kind that renews (each expiry, each 401), so only the last `MAX_TOKENS` are kept: older ones are spent.
"""

from __future__ import annotations

import re
import threading
from collections import deque

MASK = "***"
MAX_TOKENS = 64

_lock = threading.Lock()
_secrets: set[str] = set()
_tokens: deque[str] = deque(maxlen=MAX_TOKENS)

# `password=secret`, `password = 'se cret'` (libpq quotes a value with spaces; \' and \\ escape inside)
_LIBPQ_PASSWORD = re.compile(r"""(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'"]+)""")
# `scheme://user:secret@host`: the userinfo's password
_URL_PASSWORD = re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^/\s:@'\"]*:)([^@\s'\"]+)(@)")
# a bearer token, or an `Authorization: Basic x` header value, as an exception or a debug log may print them
_AUTHORIZATION = re.compile(r"(?i)(\bbearer\s+|authorization['\"]?\s*[:=,]\s*['\"]?basic\s+)([A-Za-z0-9._~+/=-]{8,})")


def register_secret(value: str | None) -> None:
    """Masks `value` in every later `redact`; empty values are ignored."""
    if value:
        with _lock:
            _secrets.add(value)


def register_token(value: str | None) -> None:
    """Masks a bearer token in every later `redact` (the last `MAX_TOKENS` tokens registered)."""
    if value:
        with _lock:
            if value not in _tokens:
                _tokens.append(value)


def redact(text: str) -> str:
    """`text` with every registered secret and every password-shaped value replaced by `***`."""
    if not text:
        return text
    with _lock:
        # the longest first: a secret that contains another is masked whole
        known = sorted(_secrets.union(_tokens), key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    text = _LIBPQ_PASSWORD.sub(lambda m: m.group(1) + MASK, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    return _AUTHORIZATION.sub(lambda m: m.group(1) + MASK, text)


def contains_secret(text: str) -> bool:
    """Whether `redact` would change `text`."""
    return redact(text) != text
