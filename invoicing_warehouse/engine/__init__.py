"""The warehouse engine: where the data lives and what is done to it once loaded.

The names every layer shares (`names`), the SQL models' runner (`sql_runner`), the readers' snapshot
(`publish`) and the reads of the raw tables' shape (`raw_tables`). It imports nothing of the project:
the extraction, the Dagster assets and the command line all sit above it (docs/architecture.md).
"""
