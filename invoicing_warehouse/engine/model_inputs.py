"""Which marts each raw table feeds, read from the models' SQL (the references the runner parses, sql_references.py).

The extraction's contract ledger names, for each list, the marts its rows reach (pipelines/invoicing/doctor/
contract.py): derived here from the SQL, so a resource added to the catalogue, or a mart added on top of it, is
named without a list written by hand. The extraction may not import the runner (publication, the build); this
module reads the same files with the same parser, and nothing else.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from invoicing_warehouse.engine.names import MARTS_SCHEMA, RAW_DATASET
from invoicing_warehouse.engine.sql_references import parse_references


def _models_folder() -> Path:
    """The product's SQL models, `<folder>/<schema>/<name>.sql`: the copy an installed wheel ships inside the
    namespace (pyproject.toml maps the top-level sql/ to invoicing_warehouse/sql), else the checkout's sql/ beside
    the package (a checkout or an editable install, whose invoicing_warehouse/ has no sql/ folder). The one place
    that knows it: the runner (sql_runner.SQL_DIR) reads it from here."""
    namespace = Path(__file__).resolve().parents[1]
    shipped = namespace / "sql"
    return shipped if shipped.is_dir() else namespace.parent / "sql"


SQL_DIR: Path = _models_folder()


@cache
def _model_reads() -> dict[str, frozenset[str]]:
    """`schema.model` -> the relations of the raw dataset and of the models' schemas its SQL reads."""
    files = sorted(path for path in SQL_DIR.glob("*/*.sql") if path.is_file())
    schemas = {path.parent.name.lower() for path in files} | {RAW_DATASET}
    return {f"{path.parent.name.lower()}.{path.stem.lower()}": parse_references(path.read_text(encoding="utf-8"),
                                                                                schemas)
            for path in files}


def marts_fed_by(raw_table: str) -> tuple[str, ...]:
    """The marts (names, sorted) built on `invoicing_raw.<raw_table>` or on its child tables
    (`<raw_table>__lines`), directly or through other models."""
    reads = _model_reads()
    fed = {relation for relation in {ref for refs in reads.values() for ref in refs}
           if relation == f"{RAW_DATASET}.{raw_table}" or relation.startswith(f"{RAW_DATASET}.{raw_table}__")}
    grown = True
    while grown:  # bounded: each pass adds at least one of the finitely many models, or stops
        added = {model for model, refs in reads.items() if model not in fed and refs & fed}
        fed |= added
        grown = bool(added)
    return tuple(sorted(relation.split(".", 1)[1] for relation in fed if relation.startswith(f"{MARTS_SCHEMA}.")))
