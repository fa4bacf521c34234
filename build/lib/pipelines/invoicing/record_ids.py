"""What a record id may be, and how one goes into a request path.

The contract types ids as `object-id` and does not show the format (invoicing-api-v2.md); api-facts says
they are 24-hex MongoDB ObjectIds. The product accepts a superset of that: 1 to `MAX_RECORD_ID_LENGTH` of
`A-Z a-z 0-9 _ -`, which holds the 24 hex of the real service (and integer ids), and no character that can
change a URL: no `/`, `.`, `?`, `#`, `%`, space or anything outside ASCII. A webhook delivery names its
record by such an id (unsigned, partial: anyone holding the URL token can send one), so the receiver refuses
any other id, and every path built from an id encodes it as one path segment anyway (`record_path`): an id
read from the warehouse or an old spool can never make `GET /customers/../../me` either.
"""

from __future__ import annotations

import re
from urllib.parse import quote

MAX_RECORD_ID_LENGTH = 64  # 24 hex today; room for another opaque format, never a URL's worth
RECORD_ID = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_RECORD_ID_LENGTH}}}")


def record_id_problem(record_id: str) -> str | None:
    """Why `record_id` is not a record id (None when it is); the reason never repeats a long value."""
    if RECORD_ID.fullmatch(record_id):
        return None
    if not record_id:
        return "the record id is empty"
    if len(record_id) > MAX_RECORD_ID_LENGTH:
        return f"the record id is {len(record_id)} characters; ids are at most {MAX_RECORD_ID_LENGTH}"
    return "the record id holds a character outside A-Z a-z 0-9 _ -"


def path_segment(record_id: str) -> str:
    """`record_id` encoded as exactly one path segment: `/`, `?`, `#`, `%` and the rest percent-encoded,
    and a dot segment (`.` or `..`, which URL normalisation would resolve) encoded too."""
    encoded = quote(record_id, safe="")
    if encoded in {".", ".."}:
        return encoded.replace(".", "%2E")
    return encoded


def record_path(collection: str, record_id: str) -> str:
    """`<collection>/<id>` with the id as one path segment (`/customers`, `a/b` -> `/customers/a%2Fb`)."""
    return f"{collection}/{path_segment(record_id)}"


def child_path(template: str, record_id: str) -> str:
    """A path template with `{id}` (`/supplier-documents/{id}/events`) filled with the id as one segment."""
    return template.format(id=path_segment(record_id))
