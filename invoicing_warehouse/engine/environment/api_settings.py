"""The settings of the calls to the API: the shared rate budget and its egress, the answers' cap, the parents read
by id, and the webhooks' door and spool. Read through reader.py only."""

from __future__ import annotations

from typing import Any

from invoicing_warehouse.engine.environment.kinds import TEXT, Setting, whole

RATE_BUDGET_DIR = Setting(
    'INVOICING_RATE_BUDGET_DIR', TEXT, None,
    '`$XDG_CACHE_HOME`, else `~/.cache`, `/invoicing-warehouse` (the same with or without `XDG_RUNTIME_DIR`: a cron'
    " or systemd run and a login shell's pace on one budget)",
    "every process calling the API: the host's shared rate budget and tokens, in a folder of the user's (0700, "
    'owner checked). A run that finds a budget file of the same API host in another place it could pace (this '
    'default folder, `$XDG_RUNTIME_DIR/invoicing-warehouse` of earlier versions, the shared folder below), touched '
    'in the last 20 minutes, says so in a warning')

RATE_BUDGET_SHARED_DIR = Setting(
    'INVOICING_RATE_BUDGET_SHARED_DIR', TEXT, None,
    'none: each user paces on a budget of their own',
    'every process calling the API: **several users of one host** (one source IP) pace on one budget. Set the same '
    'folder for all of them; the operator makes it once: `install -d -o root -g invoicing -m 2770 '
    "/var/lib/invoicing-warehouse/budget` (owned by root or the user, of a group of each user's, not writable by "
    'others: anything else is refused naming the folder). One file per API host, 0660 in that group; tokens stay in'
    " each user's own folder (pipelines/invoicing/http/host_budget.py)")

MAX_ANSWER_BYTES = Setting(
    'INVOICING_MAX_ANSWER_BYTES', whole(1024, "bytes"), 64 * 1024 * 1024,
    '`67108864` (64 MiB)',
    'every process calling the API: the most bytes one answer may hold, counted as it streams in (decoded); a '
    'larger one is refused as malformed naming the endpoint, before anything of it is loaded '
    '(pipelines/invoicing/http/answers.py). A page of 100 documents with their lines is a few hundred kilobytes; a '
    'whole number >= 1024, anything else stops the client naming the setting')

RATE_BUDGET_URL = Setting(
    'INVOICING_RATE_BUDGET_URL', TEXT, None,
    "none: the lake's catalog (`INVOICING_DUCKLAKE_CATALOG`) when the engine is `ducklake`, else the machine's "
    'file; `file` keeps the file',
    'every process calling the API: the rate budget shared by every host behind one egress IP, in PostgreSQL '
    "(`postgresql://user@host:port/db`, libpq's URL; pipelines/invoicing/http/database_budget.py; docs/scaling.md)",
    secret=True)

RATE_BUDGET_PASSWORD = Setting(
    'INVOICING_RATE_BUDGET_PASSWORD', TEXT, None,
    "none (libpq's `PGPASSWORD`/`.pgpass` still apply)",
    "the same, for `INVOICING_RATE_BUDGET_URL` (the catalog's own password is used with the catalog)", secret=True)

EGRESS_IP = Setting(
    'INVOICING_EGRESS_IP', TEXT, None,
    "the machine's source address towards the API host (a UDP `connect`, no packet sent)",
    'the same: which egress the budget is keyed by. **Behind a NAT, set it to the same value on every host behind '
    "it** (the NAT's public address, or any agreed name): each host's own address is private, and hosts that each "
    'kept their own would together exceed the 10 requests/s (pipelines/invoicing/http/egress.py). Dagster tags each'
    ' portal run with it too, `invoicing-warehouse/egress` = `<API host> via <egress>`, which the run queue limits '
    '(assets/run_tags.py, docs/deploy/dagster/dagster.yaml; unset, the tag names the host)')

PARENT_FETCH_MAX = Setting(
    'INVOICING_PARENT_FETCH_MAX', whole(0, "ids"), 500,
    '`500` (0: none)',
    'every sync (pipelines/invoicing/load/parents.py): the parents (customers, invoices) that loaded rows name and '
    'the run did not load, read by id per run before the gate judges; more are left to the next run, flagged '
    'meanwhile (`customers_exist`, `invoices_exist`)')

WEBHOOK_TOKEN = Setting(
    'INVOICING_WEBHOOK_TOKEN', TEXT, None,
    'none (required by `webhooks serve` and `register`)',
    "the webhook receiver and subscriptions: the key each portal's door is derived from "
    '(`/hooks/<HMAC-SHA256(token, portal)>/<portal>`, pipelines/invoicing/hook_urls.py); it never leaves the host',
    secret=True)

WEBHOOK_HMAC_SECRET = Setting(
    'INVOICING_WEBHOOK_HMAC_SECRET', TEXT, None,
    'none (signature not required)',
    'the webhook receiver', secret=True)

HINT_SPOOL = Setting(
    'INVOICING_HINT_SPOOL', TEXT, None,
    "none: a DuckLake's spool is in its catalog database, a DuckDB file's beside it (`<stem>.hints.sqlite`)",
    'the receiver, the applying runs, `status`, the dashboard, Dagster (hint_spool.py): a PostgreSQL DSN without '
    'password, `postgresql://user@host:port/dbname`, for the spool (schema `invoicing_hints`)')

HINT_SPOOL_PASSWORD = Setting(
    'INVOICING_HINT_SPOOL_PASSWORD', TEXT, None,
    'none',
    "the password of `INVOICING_HINT_SPOOL`'s database", secret=True)


PDF_ARCHIVE_MAX = Setting(
    'INVOICING_PDF_ARCHIVE_MAX', whole(0, "PDFs"), 0,
    '`0` (no archive)',
    'every sync (pipelines/invoicing/load/pdf_archive.py, [archive.md](archive.md)): the invoice archive, opt-in. '
    'At most this many PDFs (issued invoices and credit notes, supplier bills) downloaded per run, paced by the '
    'same limiter, into `<warehouse>.pdfs/<portal>/` beside the warehouse, their sha256 in '
    '`invoicing_raw.pdf_archive`; the rest by the next runs. A whole number >= 0, anything else stops the sync '
    'naming the setting')

SETTINGS: tuple[Setting[Any], ...] = (
    PDF_ARCHIVE_MAX, RATE_BUDGET_DIR, RATE_BUDGET_SHARED_DIR, MAX_ANSWER_BYTES, RATE_BUDGET_URL, RATE_BUDGET_PASSWORD,
    EGRESS_IP, PARENT_FETCH_MAX, WEBHOOK_TOKEN, WEBHOOK_HMAC_SECRET, HINT_SPOOL, HINT_SPOOL_PASSWORD,
)
