"""The files beside one warehouse, named in one place: every module that reads or writes one asks `WarehouseFiles`
(`target.files()` for a configured warehouse, `WarehouseFiles.beside(path)` for a DuckDB file).

The anchor is the DuckDB file, a DuckLake's data folder, or for a lake on object storage `<state_dir>/lake`
(target.py's `local_anchor`); the names follow its stem, `data/warehouse.duckdb` ->

| file | what | who |
|---|---|---|
| `data/warehouse.read.duckdb` | the readers' copy (a DuckDB file only) | publish.py, readers.py |
| `data/warehouse.gate.json` | the gate's state: what is held and why | invoicing_warehouse/runs/gate_state.py |
| `data/warehouse.runs.json` | each portal's last sync, the new fields noted | invoicing_warehouse/runs/run_log.py |
| `data/warehouse.hints.sqlite` | the webhook hints' spool (a DuckDB file only; a lake's is in its catalog) | hint_spool.py |
| `data/.warehouse.duckdb.unpublished` | there while the warehouse may hold changes its copy does not | publish.py |
| `data/warehouse.duckdb.demo` | says `invoicing-warehouse demo` made this warehouse | invoicing_warehouse/demo/command.py |
| `data/.warehouse.dlt/` | dlt's working folder (`.lake.dlt/` beside a lake's data folder) | target.py |
"""  # noqa: E501 (a table, one row a line)

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

READERS_COPY_SUFFIX = ".read.duckdb"
GATE_STATE_SUFFIX = ".gate.json"
RUNS_LOG_SUFFIX = ".runs.json"
HINTS_SPOOL_SUFFIX = ".hints.sqlite"


@dataclass(frozen=True)
class WarehouseFiles:
    """The files beside the warehouse anchored at `anchor` (a lake's folder when `lake`)."""

    anchor: Path
    lake: bool = False

    @classmethod
    def beside(cls, warehouse_path: str | Path) -> WarehouseFiles:
        """The files beside a DuckDB file."""
        return cls(Path(warehouse_path))

    @property
    def _stem_path(self) -> Path:
        # a folder given with a trailing slash names the same files as without
        return Path(str(self.anchor).rstrip("/"))

    def _named(self, suffix: str) -> Path:
        where = self._stem_path
        return where.with_name(where.stem + suffix)

    @property
    def readers_copy(self) -> Path:
        """`data/warehouse.duckdb` -> `data/warehouse.read.duckdb`."""
        return self._named(READERS_COPY_SUFFIX)

    @property
    def gate_state(self) -> Path:
        """`data/warehouse.duckdb` -> `data/warehouse.gate.json` (a lake: `data/lake.gate.json`)."""
        return self._named(GATE_STATE_SUFFIX)

    @property
    def runs_log(self) -> Path:
        """`data/warehouse.duckdb` -> `data/warehouse.runs.json`, beside the gate's state."""
        return self._named(RUNS_LOG_SUFFIX)

    @property
    def hints_spool(self) -> Path:
        """`data/warehouse.duckdb` -> `data/warehouse.hints.sqlite`."""
        return self._named(HINTS_SPOOL_SUFFIX)

    @property
    def unpublished_marker(self) -> Path:
        """`data/warehouse.duckdb` -> `data/.warehouse.duckdb.unpublished`."""
        where = self._stem_path
        return where.with_name(f".{where.name}.unpublished")

    @property
    def demo_marker(self) -> Path:
        """`data/warehouse.duckdb` -> `data/warehouse.duckdb.demo`."""
        where = self._stem_path
        return where.with_name(where.name + ".demo")

    @property
    def dlt_work_dir(self) -> Path:
        """dlt's working folder: `data/.warehouse.dlt` beside a file, `.<folder>.dlt` beside a lake's folder."""
        where = self._stem_path.resolve()
        return where.parent / f".{where.name if self.lake else where.stem}.dlt"
