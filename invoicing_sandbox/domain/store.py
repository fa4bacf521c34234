"""Records of one resource plus its sort orders, kept sorted incrementally so lists never re-sort."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable

KeyFunction = Callable[[dict], tuple]
_MISSING = object()


def sort_key(value: object) -> tuple:
    """A comparable key where null sorts before every value (ascending)."""
    return (0, "") if value is None else (1, value)


class OrderIndex:
    """All (key, id) pairs of a resource for one `orderBy`, sorted; ties are broken by id."""

    def __init__(self, key_function: KeyFunction, records: dict[str, dict]) -> None:
        self.key_function = key_function
        self.keys: dict[str, tuple] = {rid: key_function(rec) for rid, rec in records.items()}
        self.entries: list[tuple] = sorted((key, rid) for rid, key in self.keys.items())

    def update(self, rid: str, record: dict) -> None:
        """Moves `rid` to the place of its current key (insert when new)."""
        new_key = self.key_function(record)
        old_key = self.keys.get(rid, _MISSING)
        if old_key == new_key:
            return
        if old_key is not _MISSING:
            del self.entries[bisect_left(self.entries, (old_key, rid))]
        self.keys[rid] = new_key
        insort(self.entries, (new_key, rid))

    def remove(self, rid: str) -> None:
        """Drops `rid` from the order."""
        old_key = self.keys.pop(rid, _MISSING)
        if old_key is not _MISSING:
            del self.entries[bisect_left(self.entries, (old_key, rid))]

    def window(self, low_key: tuple, high_key: tuple) -> tuple[int, int]:
        """Positions [start, stop) of entries whose key lies within [low_key, high_key] inclusive."""
        start = bisect_left(self.entries, (low_key, ""))
        stop = bisect_left(self.entries, (high_key, "\U0010ffff"))
        return start, stop


class Store:
    """The records of one resource by id, and lazily built sort orders kept in step with every write."""

    def __init__(self, name: str, key_functions: dict[str, KeyFunction]) -> None:
        self.name = name
        self.records: dict[str, dict] = {}
        self.key_functions = key_functions
        self._indexes: dict[str, OrderIndex] = {}
        self.version = 0  # moves on every write: cached list results of an older version are stale

    def index(self, order_by: str) -> OrderIndex:
        """The sort order for `order_by`, built on first use."""
        found = self._indexes.get(order_by)
        if found is None:
            found = OrderIndex(self.key_functions[order_by], self.records)
            self._indexes[order_by] = found
        return found

    def put(self, record: dict) -> None:
        """Adds or re-files a record after any change that may move one of its keys."""
        rid = record["id"]
        self.version += 1
        self.records[rid] = record
        for index in self._indexes.values():
            index.update(rid, record)

    def remove(self, rid: str) -> dict | None:
        """Hard-deletes a record."""
        record = self.records.pop(rid, None)
        self.version += 1
        for index in self._indexes.values():
            index.remove(rid)
        return record

    def drop_indexes(self) -> None:
        """Forgets every sort order (after bulk loading; they are rebuilt on next use)."""
        self._indexes.clear()
