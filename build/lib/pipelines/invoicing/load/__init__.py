"""Loading: chunked dlt runs into DuckDB or DuckLake, portals, upgrades of old warehouses, tombstones."""
