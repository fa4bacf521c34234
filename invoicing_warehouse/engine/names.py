"""Names shared by every layer: the warehouse's schemas and default paths (the files beside a warehouse are
warehouse_files.py's). Kept here, the lowest layer that
needs them, so that the extraction, the models, the assets and the commands cannot disagree."""

from __future__ import annotations

# dlt's dataset of the raw tables (one per API resource), as the SQL models and the asset keys name it.
RAW_DATASET = "invoicing_raw"
STAGING_SCHEMA = "staging"
MARTS_SCHEMA = "marts"
# the models built from seed files (the ECB rates), which readers read beside the marts
REFERENCE_SCHEMA = "reference"

# The warehouse every command and the Dagster resources use unless told otherwise.
DEFAULT_WAREHOUSE_PATH = "data/warehouse.duckdb"
# `invoicing-warehouse doctor` writes its findings here; `sync` reads them when they are of its server.
DOCTOR_FINDINGS_PATH = "data/doctor.json"

# Every raw row names its portal (the user's name for it, `[a-z0-9_]+`) in this column; raw tables merge on
# (PORTAL_COLUMN, id). A warehouse configured without a portals file holds the one portal DEFAULT_PORTAL.
PORTAL_COLUMN = "portal_id"
DEFAULT_PORTAL = "default"
# The portals file (`--portals PATH`), at the project root unless told otherwise.
DEFAULT_PORTALS_PATH = "portals.toml"
