"""What each list taught the run about its pages: the sizes it served (what may end a read), the `limit` it
refused, whether it honours `skip`. One `PageSizes` per run, shared by every pager of every list (thread-safe),
committed per list with the load (`as_dict`)."""

from __future__ import annotations

import threading


class PageSizes:
    """The page sizes each list (path) served in this run: what may end a read of that list.

    The contract shows neither the default nor the maximum page size, so every list may have its own. Each
    page a list serves holds at most its maximum, so a later page of the same list shorter than the largest
    it served, and shorter than the `limit` asked, is the end. A list's first page (or any page as large as
    the largest so far) proves nothing when shorter than the limit asked: it may be a clamp, and one more
    request (an empty or shorter page) proves the end. Sizes committed by earlier runs are remembered per
    list for the record only: a maximum may shrink between runs, so they never end a read, and the `"*"`
    of older states (one size for every list) is dropped.
    """

    def __init__(self, known: dict[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._hints: dict[str, int] = {}
        self._largest: dict[str, int] = {}  # per path: the largest page it served in this run
        self._proven: dict[str, int] = {}  # per path: a page size it served while more records remained
        self._refused_above: dict[str, int] = {}
        # per path: whether `skip` was seen honoured (True) or ignored (False) in this run, and the ids of
        # the latest skip-0 answer with its other parameters (what a later page with skip is compared with)
        self._skip: dict[str, bool] = {}
        self._first_page: dict[str, tuple[tuple, set[str]]] = {}
        self.remember(known)

    def remember(self, known: dict[str, int] | None) -> None:
        """Adds sizes committed by earlier runs, per list (the old cross-list `"*"` is ignored)."""
        for path, size in (known or {}).items():
            if path == "*":
                continue
            with self._lock:
                self._hints[path] = max(self._hints.get(path, 0), int(size))

    def observe(self, path: str, asked: int, received: int) -> None:
        """Records a page of `received` records served on `path` for a `limit` of `asked`."""
        with self._lock:
            self._largest[path] = max(self._largest.get(path, 0), received)
            if received >= asked:
                self._proven[path] = max(self._proven.get(path, 0), received)

    def prove(self, path: str, size: int) -> None:
        """Records that `path` served a page of `size` records while more remained (a clamp): a page of that
        size is a full one. Only a read's own next request proves it (slices of one list run in parallel)."""
        with self._lock:
            self._proven[path] = max(self._proven.get(path, 0), size)

    def is_end(self, path: str, asked: int, received: int) -> bool:
        """Whether a page of `received` records, asked with `limit=asked`, is the last of the list at `path`:
        empty, or shorter than the limit and than a page this list served in this run (observed first)."""
        if received == 0:
            return True
        if received >= asked:
            return False
        with self._lock:
            largest = self._largest.get(path, 0)
        return received < largest

    def confirmed(self, path: str) -> int | None:
        """The largest page `path` served in this run that was not its last (None: not known yet)."""
        with self._lock:
            return self._proven.get(path)

    def limit(self, path: str, asked: int) -> int:
        """The `limit` to ask on `path`: `asked`, unless the server refused it (some servers answer 400)."""
        with self._lock:
            return min(asked, self._refused_above.get(path, asked))

    def refuse(self, path: str, limit: int) -> None:
        """Records that `path` refused (400) a `limit` above `limit`: later requests of the run ask at most it."""
        with self._lock:
            self._refused_above[path] = limit

    def skip_honoured(self, path: str) -> bool | None:
        """Whether `path` honours `skip` (seen in this run); None: not checked yet."""
        with self._lock:
            return self._skip.get(path)

    def settle_skip(self, path: str, honoured: bool) -> None:
        """Records whether `path` honours `skip` for the rest of the run."""
        with self._lock:
            self._skip.setdefault(path, honoured)

    def first_page(self, path: str, key: tuple, ids: set[str] | None = None) -> set[str] | None:
        """Remembers (with `ids`) or returns the ids of the latest skip-0 answer of `path` asked with `key`."""
        with self._lock:
            if ids is not None:
                self._first_page[path] = (key, ids)
                return ids
            known = self._first_page.get(path)
            return known[1] if known is not None and known[0] == key else None

    def as_dict(self) -> dict[str, int]:
        """What to commit, per list: this run's proven sizes where known, else the earlier runs' (a quiet
        run's short pages say nothing about a maximum)."""
        with self._lock:
            return {**self._hints, **self._proven}
