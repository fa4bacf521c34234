"""docs/settings.md, written from the catalogue: `python -m invoicing_warehouse.engine.environment.docs >
docs/settings.md`. A test (tests/operations/test_settings.py) fails when the committed page differs from
`render_settings_doc()`."""

from __future__ import annotations

import sys
from typing import Any

from invoicing_warehouse.engine.environment.catalogue import EVERY_SETTING
from invoicing_warehouse.engine.environment.kinds import DLT, Setting

INTRO = """\
# Settings

Every setting the product reads, in one table: its name, its type, its default, and who reads it. This page is
generated from the catalogue (`invoicing_warehouse/engine/environment/`) by
`python -m invoicing_warehouse.engine.environment.docs > docs/settings.md`: edit the catalogue, not this page
(`tests/operations/test_settings.py` fails when they differ). The product reads its own settings through one
door, `invoicing_warehouse/engine/environment/reader.py` (`current_environment()`): once per process, typed and
checked, a wrong value stopping with the setting's name and the form it takes; `tests/test_house_rules.py` fails on
any other read of the environment.

## Where a value comes from (the command line and Dagster alike)

From the strongest to the weakest:

1. **the environment** of the process (`export SOURCES__INVOICING__CLIENT_ID=...`);
2. **`.env`** at the project root (the checkout holding the product, never the working directory), or the file
   `INVOICING_ENV_FILE` names, `KEY=value` lines, git-ignored: read by `invoicing-warehouse` on start and by
   Dagster when it loads the definitions (`invoicing_warehouse/engine/env_file.py`, python-dotenv; `dg dev` also
   loads it), never over a variable the environment sets. The file must be yours and writable by nobody else
   (`chmod 600 .env`): one that is not is refused with that fix and nothing of it is read (a `.env` planted in a shared
   folder sent `sync` and its client secret elsewhere, security review 2, M3);
3. for dlt's keys only, **`.dlt/secrets.toml`** (git-ignored; template `.dlt/example.secrets.toml`) and
   **`.dlt/config.toml`** at the project root, the sections as the key says (`[sources.invoicing]`,
   `[sources.invoicing.portals.acme]`, `[warehouse.ducklake]`). A dlt key is also an environment variable: its
   dots become `__`, in capitals (`sources.invoicing.client_id` = `SOURCES__INVOICING__CLIENT_ID`).

Both the CLI and Dagster resolve the API's address and credentials through one function,
`pipelines/invoicing/credentials.py` (`resolve_settings`); a test checks they resolve the same values from
`.env` and from `.dlt/secrets.toml` (`tests/operations/test_settings.py`). Run from the project root:
dlt looks for `.dlt/` in the working directory (the product looks for `.env` at the project root only).

Secrets (marked 🔒) are masked in every output (`invoicing_warehouse/engine/redaction.py`), hidden in the settings' own
`repr`, and never written to a file by the product.
"""

OUTRO = """
Why the status's default threshold is twice the sync interval: it is the fail window of the raw tables' Dagster
freshness policy (assets/ingestion.py), so the two never disagree; one late or failed run is tolerated, two in a row
are not.
"""


def _env_form(key: str) -> str:
    """A dlt key as its environment variable: `sources.invoicing.client_id` -> `SOURCES__INVOICING__CLIENT_ID`."""
    return key.replace(".", "__").upper()


def _row(setting: Setting[Any]) -> str:
    name = f"`{setting.name}`"
    if setting.source == DLT:
        name += f" (`{_env_form(setting.name)}`)"
    if setting.secret:
        name += " 🔒"
    kind = "dlt's" if setting.source == DLT else setting.kind.accepted
    return f"| {name} | {kind} | {setting.default_doc} | {setting.read_by} |"


def _table(title: str, settings: list[Setting[Any]]) -> str:
    head = f"## {title}\n\n| Setting | Type | Default | Read by |\n|---|---|---|---|\n"
    return head + "\n".join(_row(setting) for setting in settings) + "\n"


def render_settings_doc() -> str:
    """The whole of docs/settings.md."""
    dlt_keys = [s for s in EVERY_SETTING if s.source == DLT]
    standard = [s for s in EVERY_SETTING if s.source != DLT and not s.name.startswith("INVOICING_")]
    product = [s for s in EVERY_SETTING if s.name.startswith("INVOICING_")]
    return "\n".join((INTRO, _table("The API account and dlt's own keys (read by dlt)", dlt_keys),
                      _table("The product's variables", product),
                      _table("Standard variables the product reads (object storage, the user's folders)", standard)
                      )) + OUTRO


def main() -> int:
    """Prints the page (redirect it into docs/settings.md)."""
    sys.stdout.write(render_settings_doc())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
