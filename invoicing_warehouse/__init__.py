"""The product's own namespace: everything of it that is not one of the designed top-level folders (pipelines/,
assets/, dagster_project/, sql/). `cli/` the `invoicing-warehouse` command, `engine/` the warehouse engine (targets,
the SQL runner, publication), `invoicing_warehouse/runs/` the run lifecycle and its gate,
`invoicing_warehouse/dashboard/` the Streamlit pages, `invoicing_warehouse/demo/` the product run on the emulator (extra
`sandbox`); the SQL models ship here as `sql/` in a wheel (pyproject.toml)."""
