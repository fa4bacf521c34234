"""A bearer token kept between the short processes of one machine, encrypted with the client secret.

The service means a token to be reused (7 days on the real service), but every sync and every Dagster run is
a process of its own: the applying runs of webhook hints, every few seconds, would otherwise ask for a token
each time (a request in three of a single change's), and a no-change sync in eleven. So the last token of a
(host, client, scope) is kept in one small file beside the host's rate budget, in the user's private state folder
(private_state.py: mode 700, owner checked; `~/.cache/invoicing-warehouse` unless set otherwise; never the users'
shared budget folder). The file is opened without following links and must be a regular file of this user's: a symlink
or a FIFO planted there is refused with an error naming it, never followed nor waited on.

The file never holds the token in the clear: it is sealed with AES-GCM under a key derived (HKDF-SHA256) from
the client secret, which lives only in the environment or dlt's secrets. Whoever can open the file without
that secret reads noise; whoever has the secret can ask for a token anyway. A rotated secret, a damaged or
foreign file, or a token the service refuses (401) only costs the token request it saved; a new token then
replaces the file (written whole, then renamed, mode 0600).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from pipelines.invoicing.http.host_budget import budget_dir, host_key
from pipelines.invoicing.http.private_state import open_state_file, private_state_dir, read_bounded

FORMAT = b"invoicing-token-cache-1"
NONCE_BYTES = 12
# A sealed token is a few hundred bytes: a bigger file is not one this product wrote (read as no token).
MAX_FILE_BYTES = 64 * 1024


@dataclass(frozen=True)
class CachedToken:
    """A kept token: its value, its lifetime when issued, and its expiry on the wall clock."""

    access_token: str
    lifetime_s: float
    expires_at: float  # time.time() seconds
    # How far the service's `Date` runs ahead of its token expiry's clock, as the fetching process measured it
    # on the token's first successful answer (auth.py). Only a bound for the next process, never taken alone:
    # that process measures again on its own first successful answer and keeps the smaller figure (the
    # service's clock may have moved on by its own since the issue, which reads as more).
    date_lead_s: float = 0.0

    def remaining_s(self) -> float:
        """Seconds of life left by this machine's wall clock."""
        return self.expires_at - time.time()


class TokenCache:
    """The kept token of one (API host, client id, scope), sealed with the client secret."""

    def __init__(self, base_url: str, client_id: str, client_secret: str, scope: str,
                 directory: Path | None = None) -> None:
        identity = "\n".join((host_key(base_url), client_id, scope)).encode()
        digest = hashlib.sha256(identity).hexdigest()
        self.folder = private_state_dir(directory if directory is not None else budget_dir())
        self.path = self.folder / f"{_file_prefix()}{digest[:24]}.bin"
        self._aad = FORMAT + identity
        self._key = HKDF(algorithm=hashes.SHA256(), length=32, salt=bytes.fromhex(digest),
                         info=FORMAT).derive(client_secret.encode())

    def load(self) -> CachedToken | None:
        """The kept token, or None when there is none, it cannot be opened with this secret, or it is spent.
        Raises LocalStateError when the file is a symlink, not a regular file, or another user's."""
        try:
            descriptor = open_state_file(self.folder, self.path.name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            sealed = read_bounded(descriptor, MAX_FILE_BYTES)
        finally:
            os.close(descriptor)
        if sealed is None:
            return None
        try:
            clear = AESGCM(self._key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], self._aad)
            kept = json.loads(clear)
            token = CachedToken(str(kept["access_token"]), float(kept["lifetime_s"]), float(kept["expires_at"]),
                                float(kept["date_lead_s"]))
        except (InvalidTag, ValueError, KeyError, TypeError):
            return None  # nothing kept, another secret's, or damaged: a token request replaces it
        return token if token.access_token and token.remaining_s() > 0 else None

    def store(self, token: CachedToken) -> None:
        """Keeps `token` for the next process; a failure to write only loses the saving."""
        clear = json.dumps(asdict(token)).encode()
        nonce = os.urandom(NONCE_BYTES)
        sealed = nonce + AESGCM(self._key).encrypt(nonce, clear, self._aad)
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}-{threading.get_ident()}.part")
        try:
            # O_EXCL: a name planted in the folder is never written through; the rename replaces a link itself
            descriptor = open_state_file(self.folder, partial.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            with os.fdopen(descriptor, "wb") as out:
                out.write(sealed)
            os.replace(partial, self.path)
        except OSError:
            partial.unlink(missing_ok=True)


def forget_kept_tokens(directory: Path | None = None) -> int:
    """Removes every token this user's processes kept (in `directory`, default the budget folder), so the next
    process asks the service for one: what a client whose rights changed needs at once, as the service honours
    a token it issued until it expires. Returns how many were removed."""
    folder = directory if directory is not None else budget_dir()
    kept = list(folder.glob(f"{_file_prefix()}*.bin"))
    for path in kept:
        path.unlink(missing_ok=True)
    return len(kept)


def _file_prefix() -> str:
    """Kept tokens are per user: two users of one machine never read or replace each other's."""
    return f"invoicing-token-{os.getuid()}-"
