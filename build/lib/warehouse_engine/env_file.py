"""The project's `.env` file, read the same way by the command line and by Dagster: every `KEY=value` line of
`.env` in the working directory (the project root) becomes an environment variable unless the environment
already sets it (the environment wins). dlt then reads `SOURCES__INVOICING__*` and the others from the
environment as usual, and `.dlt/config.toml` / `.dlt/secrets.toml` below them (docs/settings.md).

Why here: it is the lowest layer, so the shell (invoicing_warehouse/cli.py) and Dagster
(dagster_project/definitions.py) both call it before anything reads a setting, without importing dlt.
"""

from __future__ import annotations

from pathlib import Path

ENV_FILE = ".env"


def load_env_file(directory: str | Path = ".") -> list[str]:
    """Sets the variables of `directory/.env` that the environment does not set; returns their names (never
    their values: the file holds secrets). No file: nothing, an empty list."""
    import os

    from dotenv import dotenv_values

    path = Path(directory) / ENV_FILE
    if not path.is_file():
        return []
    added = []
    for name, value in dotenv_values(path).items():
        if value is not None and name not in os.environ:  # the environment wins over the file
            os.environ[name] = value
            added.append(name)
    return added
