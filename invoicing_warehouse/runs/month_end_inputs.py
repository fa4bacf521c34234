"""Which month-ends of the trend a change can reach: one digest per month-end of the raw rows that can move it.

The month-end trend (invoicing_warehouse/runs/month_end_trends.py) builds marts.dso and the models it reads as of each
of the last twelve month-ends. A publication that follows a hint about today's payment should not build them twelve
times again: what the figures as of a month-end E read is a function of the raw rows whose *reach* is on or before E,
where a row's reach is the earliest month-end it can move (the rules below, one per raw table the trend reads).
So the gate keeps, beside the trend, one digest per month-end of those rows (their count, and the sum and xor of
a hash of every column but dlt's load and row ids); a month-end whose digest is the same at the next publication
is carried over, the others are built again. A row changed in place is in the old digest at its old reach and in
the new one at its new reach: a change reaches every month-end from the earlier of the two on, the back-dated
change of issue 45 included.

The reach rules (dates minus one day: a date-time is placed in the portal's calendar by the models, and no time
zone is a day away from UTC):
- documents: the emit date, and for a document linked to another version (`prev_doc`, `next_doc`) the earliest
  emit date of it and of the versions it links to (usages of any version count on the live one: a link moves the
  old live version and the new); without an emit date, or linked to a version not loaded, every month-end (a
  document without an emit date counts as emitted on every report date: int_documents_emitted_as_of), but none for
  a document no model of the trend reads: linked to no version, and a draft or neither an invoice nor a credit
  note (a quotation); such a document linked to a version is read only through the links
  (int_usages_on_live_versions), so only its id, links, superseded state and deletion are hashed (a linked
  quotation refused moves no month-end). What a
  payment moves
  is hashed apart: PAID counts as VALIDATED, `total_payments` only on a credit note, `remaining` and `last_update`
  not at all, and a PAID document's `last_update` once more with that date as its reach (receivables count a
  PAID invoice as settled from the day it was last updated);
- documents__messages: the message's date (a reminder counts from the day it was sent);
- transactions: a payment (amount > 0) its date; a refund or a transaction without a date, every month-end
  (refunds count whatever their date in the unapplied credit of receivables_by_customer);
- transaction_usages: the earliest of its own date, its embedded transaction's date and its transaction's date;
  a credit note's usage also its credit note's emit date (its total use counts whatever its date, for a credit note
  emitted by the month-end), every month-end when that credit note is not loaded;
- customers: only what the models read of them (name, reference, deleted state), reaching from the earliest emit
  date of their documents and date of their payments (every month-end when they have a document without one that
  the trend reads, or a refund); a customer with neither can move no month-end;
- any other raw table the models come to read: every month-end.

These rules are a reading of the models' SQL. `REVIEWED_MODELS` pins the text of the models they were read
against: when a model the trend rests on changes, nothing is carried over (every month-end is built) until the
rules are read again and the pin renewed (tests/sql/test_month_end_carry_over.py says so).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from datetime import date

import duckdb

from invoicing_warehouse.engine.names import RAW_DATASET
from invoicing_warehouse.engine.sql_runner import PORTAL_TIME_ZONE, discover_models

# the models' SQL the reach rules were read against (sha256 of `models_text`); see the module's docstring
REVIEWED_MODELS = "f542da139fc0cd51"
RULES_VERSION = "4"  # raised when a rule below changes: the digests stored by another version are not compared
DIGESTS = "main.month_end_trend_inputs"  # beside marts.month_end_trends, in the warehouse's own catalog
EVERY = "date '0001-01-01'"  # reaches every month-end
NEVER = "date '9999-12-31'"  # reaches none
# dlt's bookkeeping: a row loaded again with the same values gets new ones
NOT_HASHED = frozenset({"_dlt_load_id", "_dlt_id", "_dlt_parent_id", "_dlt_root_id"})
Digest = tuple[int, int, int]  # rows, sum of the hashes, xor of the hashes


def models_text(model_keys: Iterable[str]) -> str:
    """The SQL of the models `model_keys`, in one text (the input of REVIEWED_MODELS), without their comment lines:
    a front matter or a comment that changes (a column described, a source cited) changes no figure, and must not
    turn the carry-over off."""
    models = {model.key: model for model in discover_models()}
    return "\n".join(f"-- {key}\n{_code(models[key].sql)}" for key in sorted(model_keys))


def _code(sql: str) -> str:
    # whole-line comments only: a `--` inside a line may be in a string
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def reviewed(model_keys: Iterable[str]) -> bool:
    """True when the models' SQL is the one the reach rules were read against."""
    return hashlib.sha256(models_text(model_keys).encode()).hexdigest()[:16] == REVIEWED_MODELS


def context(model_keys: Iterable[str]) -> str:
    """What else the digests of one publication are comparable under: the models' SQL, the rules, the portal's
    time zone and DuckDB's hash function (its version)."""
    text = "\n".join([models_text(model_keys), RULES_VERSION, PORTAL_TIME_ZONE, duckdb.__version__])
    return hashlib.sha256(text.encode()).hexdigest()


def digests(connection: duckdb.DuckDBPyConnection, ends: Sequence[date]) -> dict[date, Digest]:
    """The digest of each month-end of `ends` (consecutive, oldest first) over the raw tables of the catalog
    current on `connection`."""
    columns = _raw_columns(connection)
    parts = [part for table in sorted(columns) for part in _rows(table, columns[table], columns)]
    per_end = {end: (0, 0, 0) for end in ends}
    if not parts or not ends:
        return per_end
    rows = " union all ".join(parts)
    # each row counts in the digest of every month-end from the one its reach falls in: grouped by that
    # month-end here, accumulated below
    found = connection.execute(
        f"""with reached as ({rows})
            select greatest(last_day(reach), ?::date) as first_end, count(*), sum(row_hash::hugeint),
                   bit_xor(row_hash)
            from reached
            where reach <= ?::date
            group by first_end""",
        [ends[0], ends[-1]],
    ).fetchall()
    first = {row[0]: row[1:] for row in found}
    total = (0, 0, 0)
    for end in ends:
        count, hashes, xor = first.get(end, (0, 0, 0))
        total = (total[0] + count, total[1] + int(hashes), total[2] ^ int(xor))
        per_end[end] = total
    return per_end


def _raw_columns(connection: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for table, column in connection.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = ? and table_catalog = current_database() order by table_name, ordinal_position",
        [RAW_DATASET],
    ).fetchall():
        found.setdefault(table, []).append(column)
    return found


def _unread_kind(column: Callable[..., str], alias: str) -> str:
    """Whether the document row `alias` is of a kind no model of the trend reads the figures of: a draft (every
    model of the trend drops drafts: int_invoices_as_of keeps VALIDATED and PAID, the credit notes are `not
    is_draft`) or neither an invoice nor a credit note (int_invoices_as_of keeps type INVOICE, the credit notes are
    subtype CREDIT_NOTE)."""
    def of(name: str) -> str:
        return column(name, alias, "documents")
    return (f"(coalesce(cast({of('status')} as varchar) = 'DRAFT', false) "
            f"or (coalesce(cast({of('type')} as varchar), '') <> 'INVOICE' "
            f"and coalesce(cast({of('subtype')} as varchar), '') <> 'CREDIT_NOTE'))")


def _linked(column: Callable[..., str], alias: str) -> str:
    """Whether the document row `alias` is linked to another version (`prev_doc` or `next_doc`)."""
    return (f"({column('prev_doc', alias, 'documents')} is not null "
            f"or {column('next_doc', alias, 'documents')} is not null)")


def _unread_document(column: Callable[..., str], alias: str) -> str:
    """Whether the document row `alias` is one no model of the trend reads, whatever its emit date: linked to no
    version, and of a kind whose figures no model reads (`_unread_kind`). A draft validated later enters the
    digests at its emit date then, as a new row would."""
    return f"(not {_linked(column, alias)} and {_unread_kind(column, alias)})"


def _rows(table: str, names: list[str], tables: dict[str, list[str]]) -> list[str]:
    """`select row_hash, reach from <table>` by its rule (none for a table the trend does not read)."""
    if table not in READS:
        return []

    def column(name: str, alias: str = "t", of: str = table) -> str:
        return f'{alias}."{name}"' if name in tables.get(of, ()) else "null"

    def day(expression: str) -> str:  # a date-time as a date one day earlier (see the module's docstring)
        return f"(cast({expression} as date) - 1)"

    def hashed(skip: frozenset[str] = frozenset(), keep: Iterable[str] | None = None) -> str:
        chosen = [name for name in names if name not in NOT_HASHED | skip] if keep is None else list(keep)
        return ", ".join(column(name) for name in chosen)

    source = f'{RAW_DATASET}."{table}" as t'
    if table == "documents":
        # a payment moves `status` (VALIDATED -> PAID), `total_payments`, `remaining` and `last_update`: the models
        # read PAID as VALIDATED but for the day it was last updated (receivables), and `total_payments` of credit
        # notes only; so those are hashed apart, each with its own reach
        status = column("status")
        volatile = frozenset({"status", "last_update", "total_payments", "remaining", "_digest"})
        # a version links to the one before and after it: usages of any version count on the live one, so a
        # link moves the month-ends of both linked versions (the old live one and the new); an unknown linked
        # version, or a missing emit date, reaches every month-end
        versions = source
        ends_of = []

        for link, alias in (("prev_doc", "prev_version"), ("next_doc", "next_version")):
            versions += (f' left join {RAW_DATASET}."documents" as {alias} on {alias}."id" = {column(link)} '
                         f'and {alias}."portal_id" = t."portal_id"')
            ends_of.append((column(link), column("emit_date", alias)))
        unknown = " or ".join(f"({link} is not null and {emitted} is null)" for link, emitted in ends_of)
        first_emitted = ", ".join([day(column("emit_date"))] + [day(emitted) for _, emitted in ends_of])
        # a linked version of a kind whose figures no model reads (a quotation, a draft) is read only through
        # the version links (int_usages_on_live_versions: its id, links, whether it is superseded, and that it
        # exists): only those are hashed, so that a linked quotation refused or accepted moves no month-end
        link_only = (f"hash('documents: link', {column('id')}, {column('portal_id')}, {column('prev_doc')}, "
                     f"{column('next_doc')}, coalesce(cast({status} as varchar) = 'CANCELED', false), "
                     f"{column('_deleted_at')})")
        row = (f"select case when {_unread_kind(column, 't')} then {link_only} "
               f"else hash('documents', {hashed(volatile)}, "
               f"case when {status} = 'PAID' then 'VALIDATED' else {status} end, "
               f"case when {column('subtype')} = 'CREDIT_NOTE' then {column('total_payments')} end) end as row_hash, "
               f"case when {_unread_document(column, 't')} then {NEVER} "
               f"when {column('emit_date')} is null or {unknown} then {EVERY} else least({first_emitted}) end "
               f"as reach from {versions}")
        paid = (f"select hash('documents: paid', {column('id')}, {column('portal_id')}, {column('last_update')}) "
                f"as row_hash, coalesce({day(column('last_update'))}, {EVERY}) as reach "
                f"from {source} where {status} = 'PAID'")
        return [row, paid]
    if table == "customers":
        # the models read a customer's name, reference and deleted state (receivables, receivables_by_customer);
        # `due_amount` and `documents_count` move with every invoice and payment, and `last_update` with them
        read = ("id", "portal_id", "name", "reference", "deleted", "deleted_at", "_deleted_at")
        earliest = []
        if "documents" in tables:
            earliest.append(f'(select min(case when {_unread_document(column, "d")} then {NEVER} '
                            f'else coalesce({day(column("emit_date", "d", "documents"))}, {EVERY}) end) '
                            f'from {RAW_DATASET}."documents" as d '
                            f'where {column("customer_id", "d", "documents")} = t."id")')
        if "transactions" in tables:
            earliest.append(
                f'(select min(case when {column("amount", "p", "transactions")} > 0 '
                f'and {column("date", "p", "transactions")} is not null '
                f'then {day(column("date", "p", "transactions"))} else {EVERY} end) '
                f'from {RAW_DATASET}."transactions" as p '
                f'where {column("customer_id", "p", "transactions")} = t."id")')
        reach = f"coalesce(least({', '.join(earliest)}), {NEVER})" if earliest else NEVER
        return [f"select hash('customers', {hashed(keep=read)}) as row_hash, {reach} as reach from {source}"]
    extra = ""
    if table == "documents__messages":
        # the parent's id in the hash: a message is the same only on the same document
        if "documents" in tables:
            source += f' left join {RAW_DATASET}."documents" as parent on parent."_dlt_id" = t."_dlt_parent_id"'
        extra = f", {column('id', 'parent', 'documents')}"
        reach = f"coalesce({day(column('date'))}, {EVERY})"
    elif table == "transactions":
        reach = (f"case when {column('amount')} > 0 and {column('date')} is not null "
                 f"then {day(column('date'))} else {EVERY} end")
    elif table == "transaction_usages":
        linked = f"coalesce({column('transaction_id')}, {column('transaction__id')})"
        if "transactions" in tables:
            source += f' left join {RAW_DATASET}."transactions" as paid on paid."id" = {linked}'
        if "documents" in tables:
            source += (f' left join {RAW_DATASET}."documents" as credit_note on credit_note."id" = '
                       f'{column("credit_note_id")} and credit_note."portal_id" = t."portal_id"')
        dates = ", ".join(day(d) for d in (column("date"), column("transaction__date"),
                                           column("date", "paid", "transactions")))
        is_credit_note = (f"coalesce(cast({column('type')} as varchar) = 'CREDIT_NOTE', false) "
                          f"or {column('credit_note_id')} is not null")
        # a credit note's use counts whatever its date, but only for a credit note emitted by the month-end
        emitted = column("emit_date", "credit_note", "documents")
        reach = (f"case when {is_credit_note} then (case when {emitted} is null then {EVERY} "
                 f"else least({dates}, {day(emitted)}) end) else coalesce(least({dates}), {EVERY}) end")
    else:
        reach = EVERY
    return [f"select hash('{table}', {hashed()}{extra}) as row_hash, {reach} as reach from {source}"]


# the raw tables the trend's models read (checked against the models by the test of the pin)
READS = frozenset({"documents", "documents__messages", "transactions", "transaction_usages", "customers"})


def stored(connection: duckdb.DuckDBPyConnection, warehouse: str, under: str) -> dict[date, Digest]:
    """The digests kept with the trend published last, when they were made under the same `under` (context),
    else none."""
    schema, name = DIGESTS.split(".")
    present = connection.execute(
        "select count(*) from information_schema.tables where table_catalog = ? and table_schema = ? "
        "and table_name = ?", [warehouse, schema, name]).fetchall()[0][0]
    if not present:
        return {}
    rows = connection.execute(
        f'select month_end, row_count, hash_sum, hash_xor, context from "{warehouse}".{DIGESTS}').fetchall()
    return {end: (count, int(hashes), int(xor)) for end, count, hashes, xor, made in rows if made == under}


def write(connection: duckdb.DuckDBPyConnection, warehouse: str, under: str, found: dict[date, Digest]) -> None:
    """Replaces the kept digests with `found` (inside the caller's transaction)."""
    connection.execute(f'drop table if exists "{warehouse}".{DIGESTS}')
    connection.execute(f'create table "{warehouse}".{DIGESTS} (month_end date, row_count bigint, '
                       "hash_sum hugeint, hash_xor ubigint, context varchar)")
    for end, (count, hashes, xor) in sorted(found.items()):
        connection.execute(f'insert into "{warehouse}".{DIGESTS} values (?, ?, ?, ?, ?)',
                           [end, count, hashes, xor, under])


def forget(connection: duckdb.DuckDBPyConnection, warehouse: str) -> None:
    """Drops the kept digests (the trend was dropped: nothing to carry over from)."""
    connection.execute(f'drop table if exists "{warehouse}".{DIGESTS}')
