"""Keyset paging over a frozen lastUpdate window, and a skip scan for lists without a usable window.

Records of one `lastUpdate` second may come back in a different order on every request (the contract
promises no tie order), so no read trusts a `skip` into a same-second group across requests unchecked: a
window is read in `lastUpdate` order, each page restarting at the second of the previous page's last
record. It skips the records of that second already read but the last, which must come back first, and
once past the second the ids read at it must reach its count; a failed check reads that second alone, by
the window [S, S], in passes until the distinct ids reach its count. A read whose checks fail twice (the
server shuffles ties) restarts every page at its second with skip 0 (re-reading the second's records,
deduped by `id`), and reads a group of at least a page alone, in passes. Records leaving a group mid-read
moved past the window's end: a later run reads them. A page ends the read only when it is empty, or shorter
than both the `limit` asked and a page THIS LIST served in this run: the contract shows no maximum page size,
so each list may have its own, it may clamp `limit`, and it may shrink between runs.

The rooms: `ListRequests` asks one page and checks it (page_requests.py), `PageSizes` keeps what each list
taught the run (page_sizes.py); one pager object per paging strategy keeps its own state: `KeysetPager` (a
window, keyset_pager.py) hands a second to `GroupPager` (one same-second group, in passes), `ScanPager`
(whole-list passes by skip, scan_pager.py) under the refusal ladder of `skip_pages`. This module names them
for the readers.
"""

from pipelines.invoicing.read.keyset_pager import GroupPager, KeysetPager, keyset_pages
from pipelines.invoicing.read.page_requests import (
    PAGE_LIMIT,
    ListRequests,
    Note,
    Page,
    PagingNotHonoured,
    ParametersRefused,
    WindowNotHonoured,
    last_update_of,
)
from pipelines.invoicing.read.page_sizes import PageSizes
from pipelines.invoicing.read.scan_pager import ScanPager, skip_pages

__all__ = [
    "PAGE_LIMIT",
    "GroupPager",
    "KeysetPager",
    "ListRequests",
    "Note",
    "Page",
    "PageSizes",
    "PagingNotHonoured",
    "ParametersRefused",
    "ScanPager",
    "WindowNotHonoured",
    "keyset_pages",
    "last_update_of",
    "skip_pages",
]
