"""The contract ledger, machine-readable: every field, parameter, header and behaviour the product relies on.

One `LedgerRow` per item: where the promise comes from (`contract` = the spec, `api-facts` = the public facts
page, `assumption` = neither), which code uses it, what the product does when the item is absent or different
(`derive` it from promised fields, `check`: a check fails naming field and marts, run by the gate on every path,
invoicing_warehouse/runs/gate.py; `note`: a sync note, `fine`: not used for numbers), the check or note that shows it,
and the marts it feeds. `docs/contract.md` lists the same rows for people (a test keeps the two equal); the doctor
probes the `field` rows on sample pages and the other kinds with its own requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from invoicing_warehouse.engine.model_inputs import marts_fed_by
from pipelines.invoicing.settings import LISTS

Source = Literal["contract", "api-facts", "assumption"]
Absent = Literal["derive", "check", "note", "fine"]
Kind = Literal["field", "parameter", "header", "behaviour"]

RECEIVABLES = ("receivables", "receivables_by_customer", "overdue_customers", "expected_payments",
               "payment_history", "payment_behaviour")
CLAIMS = ("late_payment_claims", "late_payment_interest_periods")
PAYABLES = ("supplier_payables", "payables_by_supplier", "payables_schedule")


# (list, whether the spec names `limit`/`skip` for it, the marts built on its rows): from the catalogue and the SQL
PAGED_LISTS: tuple[tuple[str, bool, tuple[str, ...]], ...] = tuple(
    (name, endpoint.paging_named, marts_fed_by(name)) for name, endpoint in LISTS.items())


@dataclass(frozen=True)
class LedgerRow:
    """One item of the contract ledger (see the module docstring for the vocabulary)."""

    resource: str  # list or endpoint name (`documents`, `auth`, `http`, ...)
    json_path: str  # dotted JSON path of a field, or the parameter/header/behaviour's name
    source: Source
    used_by: str
    absent: Absent
    check: str  # the check or note that makes it visible ("" when none is needed)
    marts: tuple[str, ...]
    behaviour: str  # what the product does when the item is missing or different
    kind: Kind = "field"

    @property
    def key(self) -> str:
        """`resource.json_path`, the row's name in the doc and the doctor's report."""
        return f"{self.resource}.{self.json_path}"


def _r(resource, path, source, used_by, absent, check, marts, behaviour, kind="field") -> LedgerRow:
    return LedgerRow(resource, path, source, used_by, absent, check, tuple(marts), behaviour, kind)


LEDGER: tuple[LedgerRow, ...] = (
    # --- authentication and token -------------------------------------------------------------------
    _r("auth", "access_token", "contract", "client.py (token request)", "check", "run stops", (),
       "the run stops with a `malformed` error before the warehouse is touched"),
    _r("auth", "expires_in", "contract", "auth.py (renewal)", "note", "N5", (),
       "renewed at half its life; unknown lifetime: the token is kept until a 401 and note N5 says so"),
    _r("auth", "scope", "contract", "client.py (scope read)", "check", "run stops", (),
       "a refused `read` scope stops the run with a `scope` error naming what to ask for"),
    _r("auth", "AccessToken-ExpireAt", "contract", "auth.py (_note_expiry)", "fine", "", (),
       "read on successful answers only (an error may come from a server in front of the service); brings "
       "renewal earlier only by more than 30 s (a Date from another clock is not a short token); a token's "
       "first successful answer measures how far Date runs ahead, at most 15 s, and windows end as much "
       "earlier; a lead kept with the token is taken by the next process only as its own measure confirms "
       "it (the smaller of the two); a 401 renews anyway", "header"),
    # --- transport, envelope, headers ---------------------------------------------------------------
    _r("http", "data", "contract", "client.py, paging.py", "check", "list fails alone", (),
       "an answer without `data` ends that list's read with a `malformed` error naming the endpoint (row "
       "`lists.one list failing`; on GET /me, the run's first request, it stops the run), as does one past the "
       "byte cap (INVOICING_MAX_ANSWER_BYTES), one holding NaN, Infinity, a number of 1e14 or more or nesting past "
       "the parser's depth (answers.py) and a page longer than the `limit` asked (paging.py); a number past its "
       "column's decimal type (rows.py) stops the run"),
    _r("http", "Date", "assumption", "feed.py (windows), client.py", "note", "N7", (),
       "absent (or repeated, unparsable, or without a zone such as `-0000`: read as absent): windows end at the local "
       "clock minus 60 s and note N7 (degraded, `run: `) says so: a local clock "
       "ahead of the service's by more than the lag and overlap misses rows until a reconcile", "header"),
    _r("http", "RateLimit-Limit", "api-facts", "client.py (limiter)", "fine", "", (),
       "absent: steady pacing below 10 requests/s (slower, never wrong)", "header"),
    _r("http", "RateLimit-Remaining", "api-facts", "client.py (limiter)", "fine", "", (),
       "absent: steady pacing below 10 requests/s", "header"),
    _r("http", "RateLimit-TTL", "api-facts", "client.py (wait on 429)", "fine", "", (),
       "absent: exponential backoff after a 429", "header"),
    _r("http", "Retry-After", "assumption", "client.py (wait on 429)", "fine", "", (),
       "used when present (delay-seconds, or an HTTP date counted from the answer's Date; a date without a zone "
       "is absent), capped at 120 s, else backoff", "header"),
    _r("http", "lastUpdate clock = Date clock", "assumption", "windows.py (lag 5 s, overlap 30 s)", "note",
       "N8", (), "skew up to the 30 s overlap is absorbed; a Date ahead (measured against AccessToken-ExpireAt) "
       "ends the windows as much earlier; a lastUpdate clock ahead is measured and noted (N8)",
       "behaviour"),
    _r("http", "second precision", "api-facts", "dates.py, windows.py, reader.py", "note", "N13", (),
       "sub-second lastUpdate values are read and compared by whole seconds; note N13 (cost) says so: a window "
       "restarting inside a second looks unhonoured and the list is read in full; a version changed again "
       "within its second is reloaded by the next run (overlap_seen), as with whole seconds", "behaviour"),
    _r("http", "date-only at UTC midnight", "assumption", "staging *_date columns", "derive", "dates_at_midnight",
       RECEIVABLES + PAYABLES, "dates are read as the Europe/Paris calendar date, right for UTC and Paris "
       "midnight alike; check dates_at_midnight (WARN) names any other time of day", "behaviour"),
    _r("http", "404 for a gone record", "api-facts", "reader.py (missing ids), parents.py", "fine", "", (),
       "a 404 marks the record deleted at run time (tombstone); a parent never loaded is loaded as a tombstone "
       "row (its id, `_deleted_at`), so the rows naming it still resolve", "behaviour"),
    _r("http", "GET by id of a parent", "contract", "by_id.py (parents.py, hint_apply.py)", "check",
       "customers_exist", RECEIVABLES, "GET /customers/{id} and GET /documents/{id}: the parents that loaded rows "
       "name and the run did not load (settle lag, a record created during the read, a customer hidden after "
       "deletion) are read by id before the gate judges, at most INVOICING_PARENT_FETCH_MAX (500) per run, paced "
       "by the limiter; a parent the API refuses alone stays dangling, flagged (customers_exist, invoices_exist: "
       "WARN, rows and amount)", "behaviour"),
    _r("http", "another 4xx for one record", "assumption", "hint_apply.py (GET /<resource>/{id})", "check",
       "no_dead_hints", (), "a 4xx other than 401, 403, 404, 408, 429, or another record answered, is that record's "
       "alone: its hint is set aside (tried again after 60 s and 120 s, then a dead letter; no_dead_hints, WARN) and "
       "the rest of the batch is applied; the scheduled sync still reads the record", "behaviour"),
    # --- lists: paging, windows, order --------------------------------------------------------------
    _r("lists", "limit/skip", "contract", "paging.py", "note", "N4", (),
       "per list (rows `<list>.limit/skip`): refused (400) or ignored (skip N answers the skip-0 records, or half "
       "of them or more when asked past them all, the list changing between the two; or pages by skip bring "
       "nothing new): one unpaged answer, note N4 (degraded, `<table>: `) says rows may be missing", "parameter"),
    _r("lists", "page size", "assumption", "paging.py (PageSizes)", "note", "N12", (),
       "per list (rows `<list>.page size`): learnt in the run from what that list serves (clamp or 400); a "
       "size of another list or of an earlier run never ends a read", "parameter"),
    _r("lists", "updatedSince/updatedUntil", "contract", "paging.py, windows.py", "note", "N1", (),
       "ignored: detected, read in full (N2); refused (400): read in full (N1); costs time, never rows",
       "parameter"),
    _r("lists", "orderBy=lastUpdate", "contract", "paging.py", "note", "N3", (),
       "ignored: detected, read in full; refused: read by skip in the server's order, in passes (N3)",
       "parameter"),
    _r("lists", "order=1 ascending", "assumption", "paging.py", "note", "N2", (),
       "another direction is detected and the list is read in full", "parameter"),
    _r("lists", "inclusive window bounds", "assumption", "windows.py", "fine", "", (),
       "exclusive bounds are covered by the 30 s overlap", "behaviour"),
    _r("lists", "settle lag of a first sync", "contract", "settle.py (updatedSince, limit=1)", "fine", "",
       RECEIVABLES + PAYABLES, "windows end 5 s before the run's Date; a first sync or full refresh whose honoured "
       "windows hold a record past that end (one request per list) waits out the lag and reads one more short "
       "window, so its figures are whole in that run; later runs read the lag through the overlap", "behaviour"),
    _r("lists", "stable tie order", "assumption", "paging.py (same-second groups)", "note", "N10", (),
       "skips into a same-second group only where the last record read comes back first and, past the "
       "second, the ids read reach its count; else (and where ties were seen to shuffle) the second is "
       "read alone, in passes until its count is complete (N10), else the run fails loudly", "behaviour"),
    _r("lists", "lastUpdate", "api-facts", "paging.py, windows.py", "note", "N2", (),
       "a record without lastUpdate makes the window untrusted: the list is read in full"),
    # --- paging, per list (the contract shows no page size, and no paging names for three lists) ------
    *(row for name, named, marts in PAGED_LISTS for row in (
        _r(name, "page size", "assumption", "page_sizes.py (PageSizes, per list)", "note", "N12", (),
           "this list's own size, learnt in the run (clamp or 400): a page ends a read only when shorter than "
           "the limit and than a page this list served; a first short page costs one more request; another "
           "list's size or an earlier run's never ends a read", "parameter"),
        _r(name, "limit/skip", "contract" if named else "assumption",
           "page_requests.py (ListRequests.fetch), scan_pager.py (skip_pages)", "note", "N4", marts,
           "refused (400) or ignored (skip N answers the skip-0 records, or half of them or more, or "
           "pages by skip bring nothing new) where a read needs them: "
           f"one unpaged answer and a degraded note `{name}: ...` (rows may be missing; the marts are not exact)"
           + ("; a window read by whole seconds needs no skip and stays exact" if name != "webhooks" else ""),
           "parameter"),
    )),
    _r("lists", "one list failing", "assumption", "feed.py (FAILS_ALONE), gate.py (failed reads)", "check",
       "held", (), "a list whose requests keep failing (5xx or 429 after the retries, a malformed answer, another "
       "4xx) is that list's failure alone: its read ends, its cursor stays, the other lists load; the marts built "
       "on it keep their last good figures until a run reads it again, and the run exits 3 (partial); a list "
       "that feeds no mart holds nothing (exit 0, a note); bad credentials or scope, an unreachable base URL, or "
       "every list failing stop the run", "behaviour"),
    _r("lists", "lastUpdate moves on every change", "assumption", "reader.py (unchanged, same_content)", "check",
       "document_versions_single_live", (*RECEIVABLES, "dso", "cash_outlook"),
       "a change that keeps lastUpdate (a replaced version turning CANCELED, a status the application set) "
       "escapes the windows: document_versions_single_live (blocking) names a prevDoc/nextDoc chain with two "
       "live versions; the reconcile compares each record with the digest of the loaded one (`_digest`) and "
       "loads it again", "behaviour"),
    # --- customers ----------------------------------------------------------------------------------
    _r("customers", "name", "contract", "receivables.sql, overdue_customers.sql", "fine", "", RECEIVABLES,
       "absent: receivables fall back to the document's `to.name`"),
    _r("customers", "dueAmount", "contract", "due_amount_check.py", "check", "total_open_matches_due_amount",
       ("receivables_by_customer",), "absent: the check passes with a note for that customer (the stored "
       "value is null), never compared with 0"),
    _r("customers", "deleted", "api-facts", "rows.py, stg_invoicing__customers.sql", "fine", "",
       ("receivables_by_customer", "overdue_customers"),
       "a `deleted: true` customer is flagged `is_deleted`; overdue_customers leaves it out"),
    _r("customers", "deletedAt", "assumption", "rows.py (_deleted_at)", "derive", "", (),
       "absent: `_deleted_at` is the observation time (server Date of the run), kept on later runs"),
    _r("customers", "deleted with invoices owed", "assumption", "parents.py, receivables.sql, checks.py",
       "check", "deleted_customers_owed", RECEIVABLES + CLAIMS + ("payment_terms_report",),
       "a customer deleted while owed (listed, flagged, hidden from lists, or 404 by id) keeps its invoices: "
       "counted in receivables, claims and D441-6 under its name, or `deleted customer <id>` when the API says "
       "only that it is gone; deleted_customers_owed (WARN) names the invoices and their open amount",
       "behaviour"),
    _r("customers", "deleted customers listed", "assumption", "reader.py (id scan)", "note", "N9",
       ("receivables_by_customer", "overdue_customers"), "customers are read in full every run and known "
       "ids missing from the list are read by id: hidden deletions are seen (N9)", "behaviour"),
    _r("customers", "type", "contract", "int_customer_types.sql (customer_type)", "derive", "",
       (*CLAIMS, "payment_terms_over_cap"),
       "absent (optional in the contract) or another value: inferred, business when the customer has a siret "
       "(the contract's inference) or a vat number, else consumer (is_customer_type_inferred, customer_type_basis); "
       "a consumer's late invoice claims nothing and its terms are not capped"),
    _r("customers", "siret", "contract", "int_customer_types.sql (customer_type)", "fine", "",
       (*CLAIMS, "payment_terms_over_cap"),
       "read only to infer a missing type: a siret is a business, as the contract says"),
    _r("customers", "vat", "contract", "int_customer_types.sql (customer_type)", "fine", "",
       (*CLAIMS, "payment_terms_over_cap"),
       "read only to infer a missing type: without a siret, a vat number is a business (customer_type_basis "
       "'vat number'); absent: the contract's inference alone"),
    # --- documents ----------------------------------------------------------------------------------
    _r("documents", "customerId", "contract", "receivables.sql, parents.py, checks.py customers_exist", "check",
       "customers_exist", RECEIVABLES, "a customer not loaded is read by id in the run (gone: a tombstone row); "
       "one still missing: its invoices are counted and customers_exist (WARN) names the rows and their amount"),
    _r("documents", "type", "contract", "receivables.sql", "fine", "", RECEIVABLES,
       "invoices are `type INVOICE`"),
    _r("documents", "subtype", "contract", "receivables.sql", "check", "document_subtypes_known", RECEIVABLES,
       "receivables exclude only CREDIT_NOTE and PROFORMA; any unknown spelling is counted and named by "
       "document_subtypes_known (WARN)"),
    _r("documents", "status", "contract", "receivables.sql", "fine", "", RECEIVABLES,
       "DRAFT/VALIDATED/PAID; CANCELED marks a superseded version"),
    _r("documents", "emitDate", "contract", "receivables.sql", "check", "fields_served", RECEIVABLES[:2],
       "absent: fields_served fails naming documents.emitDate and the marts"),
    _r("documents", "dueDate", "assumption", "int_invoices_as_of.sql (due_date, is_due_date_assumed)", "derive",
       "fields_served", (*RECEIVABLES, "dso", "cash_outlook"), "absent on an invoice: the legal default, "
       "emitDate + 30 days (C. com. L441-10, the emit date standing for delivery), flagged "
       "receivables.is_due_date_assumed and shown as assumed on the dashboard; fields_served (WARN) names "
       "documents.dueDate"),
    _r("documents", "status PAID closes an invoice", "contract", "receivables.sql (open amount)", "check",
       "paid_invoices_settled", (*RECEIVABLES, "dso", "cash_outlook"), "PAID: nothing open whatever the usages "
       "say (on a past date: once its lastUpdate is on or before it, else what the usages dated by then leave); "
       "a residual (total minus usages) is a write-off to book, named by paid_invoices_settled (WARN)",
       "behaviour"),
    _r("documents", "version chain prevDoc/nextDoc", "api-facts", "int_usages_on_live_versions.sql", "check",
       "usages_reach_live_invoices", (*RECEIVABLES, "dso", "cash_outlook"), "either link suffices to reach the "
       "live version; a usage whose version leads to no live one fails usages_reach_live_invoices (blocking)",
       "behaviour"),
    _r("documents", "amountVatNet", "contract", "receivables.sql (open amount)", "check", "fields_served",
       RECEIVABLES, "absent: fields_served fails (blocking) naming documents.amountVatNet"),
    _r("documents", "credit note sign", "assumption", "receivables_by_customer.sql", "check",
       "credit_note_sign_consistent", RECEIVABLES[:2], "credit notes are found by subtype and counted by "
       "absolute value; mixed signs fail credit_note_sign_consistent", "behaviour"),
    _r("documents", "messages", "assumption", "stg_invoicing__document_messages.sql, receivables.sql",
       "check", "fields_served", ("receivables", "overdue_customers"), "absent: next_reminder_template is "
       "NULL (unknown), never a guess; fields_served (WARN) names documents.messages"),
    _r("documents", "remaining", "assumption", "stg_invoicing__document_versions.sql", "fine", "", (),
       "staged only"),
    _r("documents", "invoiceId", "assumption", "stg_invoicing__document_versions.sql", "fine", "", (),
       "staged only (credited invoice)"),
    _r("documents", "totalPayments", "api-facts",
       "hint_apply.py (payments windows of a hint run), receivables_by_customer.sql (credit-note refunds)", "fine",
       "", ("receivables_by_customer",), "a document hint reads the payments windows when it changed; absent: "
       "every document hint reads them, and a credit note's refund that names no credit note lowers unapplied "
       "payments instead of the credit (the customer's unapplied total stays right)"),
    _r("documents", "to.name", "contract", "receivables.sql (fallback name)", "fine", "", (), "label only"),
    _r("documents", "currency", "assumption", "stg_invoicing__document_versions.sql, receivables.sql", "check",
       "receivables_single_currency", (*RECEIVABLES, "dso", "cash_outlook"), "absent: euros (a French "
       "portal's; the spec says euros for supplier documents); two currencies among invoices, credit notes "
       "and payments fail receivables_single_currency (blocking), receivables and payables in two currencies "
       "fail cash_outlook_single_currency (blocking); the marts carry `currency` and the dashboard shows it"),
    # --- transaction usages -------------------------------------------------------------------------
    _r("transaction_usages", "type", "api-facts", "stg_invoicing__transaction_usages.sql", "derive",
       "usages_typed", RECEIVABLES, "absent: derived from which link is set (transaction or creditNoteId); "
       "usages_typed fails when neither is"),
    _r("transaction_usages", "usages across versions", "assumption", "int_usages_on_live_versions.sql",
       "derive", "usages_reach_live_invoices", (*RECEIVABLES, "dso", "cash_outlook"), "a usage left on a "
       "replaced (CANCELED) version counts for the live version of the same document; usage_invoice_id keeps "
       "the version the server holds it on", "behaviour"),
    _r("transaction_usages", "invoiceId", "api-facts", "receivables.sql, parents.py, checks.py invoices_exist",
       "check", "invoices_exist", RECEIVABLES, "an invoice not loaded is read by id in the run; absent or still "
       "missing: invoices_exist (WARN) names the usages and their amount"),
    _r("transaction_usages", "amount", "api-facts", "receivables.sql", "fine", "", RECEIVABLES,
       "promised; no fallback needed"),
    _r("transaction_usages", "transaction.date", "api-facts", "stg_invoicing__transaction_usages.sql", "derive",
       "usages_dated", RECEIVABLES, "the payment date of a TRANSACTION usage"),
    _r("transaction_usages", "transactionId", "assumption", "stg_invoicing__transaction_usages.sql", "derive",
       "", (), "absent: the embedded transaction's id"),
    _r("transaction_usages", "creditNoteId", "api-facts", "receivables_by_customer.sql", "fine", "",
       RECEIVABLES[:2], "promised on CREDIT_NOTE usages"),
    _r("transaction_usages", "date", "assumption", "stg_invoicing__transaction_usages.sql", "derive",
       "usages_dated", RECEIVABLES, "absent: the embedded transaction's `date`, else the credit note's "
       "`emitDate`; usages_dated fails (blocking) when neither is known"),
    # --- transactions -------------------------------------------------------------------------------
    _r("transactions", "customerId", "api-facts", "receivables_by_customer.sql", "check", "fields_served",
       ("receivables_by_customer",), "absent: fields_served fails (blocking) naming transactions.customerId"),
    _r("transactions", "amount", "contract", "receivables_by_customer.sql", "fine", "",
       ("receivables_by_customer",), "promised"),
    _r("transactions", "date", "contract", "stg_invoicing__transactions.sql", "check", "fields_served",
       ("receivables_by_customer",), "absent: fields_served fails (blocking) naming transactions.date"),
    _r("transactions", "refundedAmount", "api-facts", "receivables_by_customer.sql", "check", "fields_served",
       ("receivables_by_customer",), "absent: counted 0 and fields_served (WARN) names it; a refund then shows "
       "as its negative transaction, which lowers unapplied payments all the same"),
    _r("transactions", "documentId", "assumption", "receivables_by_customer.sql (refund of a credit note)",
       "derive", "", ("receivables_by_customer",), "names the credit note a refund pays back; absent: that "
       "credit note's totalPayments beyond its usages is its refund (undated: counted on every report date)"),
    _r("transactions", "refunds", "api-facts", "receivables_by_customer.sql", "derive", "",
       ("receivables_by_customer",), "a transaction whose amount is negative is a refund: of the credit note "
       "its documentId names, else of the customer's payments; refundedAmount no negative transaction shows is "
       "subtracted too, never twice", "behaviour"),
    _r("transactions", "currency", "assumption", "stg_invoicing__transactions.sql", "check",
       "receivables_single_currency", ("receivables_by_customer",), "absent: euros; a portal whose payments "
       "and invoices are in two currencies fails receivables_single_currency (blocking)"),
    # --- suppliers ----------------------------------------------------------------------------------
    _r("suppliers", "name", "assumption", "payables_by_supplier.sql, supplier_payables.sql", "fine", "", PAYABLES,
       "label only (the spec says 'legal name')"),
    _r("suppliers", "legalIdentifier", "contract", "payables_by_supplier.sql", "fine", "", PAYABLES,
       "label only"),
    _r("suppliers", "email", "assumption", "stg only", "fine", "", (), "staged only"),
    _r("suppliers", "phone", "assumption", "stg only", "fine", "", (), "staged only"),
    _r("suppliers", "address", "assumption", "stg only", "fine", "", (), "staged only"),
    # --- supplier documents -------------------------------------------------------------------------
    _r("supplier_documents", "supplierId", "contract", "supplier_payables.sql", "fine", "", PAYABLES, "promised"),
    _r("supplier_documents", "status", "contract", "supplier_payables.sql", "check",
       "supplier_document_values_known", PAYABLES, "spellings are normalised (case, separators); an "
       "unknown value fails supplier_document_values_known naming it"),
    _r("supplier_documents", "type", "contract", "stg_invoicing__supplier_documents.sql", "check",
       "supplier_document_values_known", PAYABLES, "credit notes recognised in any case/separator "
       "spelling; an unknown value fails supplier_document_values_known"),
    _r("supplier_documents", "credit note sign", "assumption", "supplier_payables.sql", "check",
       "supplier_credit_note_sign_consistent", (*PAYABLES, "cash_outlook"), "credit notes are found by type and "
       "counted by absolute value, negative in amount_due; mixed signs fail supplier_credit_note_sign_consistent",
       "behaviour"),
    _r("supplier_documents", "owed statuses", "assumption", "supplier_payables.sql", "check",
       "supplier_document_values_known", (*PAYABLES, "cash_outlook"), "a bill is owed (a liability) when it is "
       "approved, awaiting approval (toApprove) or disputed on the report date, shown apart by approval_state; "
       "refused and paid bills are not owed; an unknown status fails supplier_document_values_known", "behaviour"),
    _r("supplier_documents", "amount", "assumption", "supplier_payables.sql", "check", "payables_have_amount",
       PAYABLES, "no amount at all: counted 0 and payables_have_amount fails naming the document"),
    _r("supplier_documents", "amountVat", "assumption", "supplier_payables.sql", "derive",
       "payables_have_amount", PAYABLES, "absent: amount + vat"),
    _r("supplier_documents", "issueDate", "assumption", "stg_invoicing__supplier_documents.sql", "check",
       "fields_served", PAYABLES, "absent: fields_served (WARN) names it"),
    _r("supplier_documents", "dueDate", "assumption", "int_supplier_documents__status_as_of.sql (due_date)",
       "derive", "fields_served", (*PAYABLES, "cash_outlook", "payment_terms_report"),
       "absent on a bill: the legal default, issueDate + 30 days (C. com. L441-10 I), flagged "
       "is_due_date_assumed; a credit note without one stays undated; fields_served (WARN) names it"),
    _r("supplier_documents", "paymentDate", "assumption", "supplier_payables.sql (status as of)", "check",
       "supplier_status_as_of_known", (*PAYABLES, "payment_terms_paid_late_table"), "absent: a past status is taken "
       "from the history; when unknown it is NULL and supplier_status_as_of_known fails; a paid bill without one "
       "is left out of the paid-late table"),
    _r("supplier_documents", "currency", "contract", "supplier_payables.sql, cash_outlook.sql", "check",
       "payables_single_currency", (*PAYABLES, "cash_outlook"), "absent: euros (spec: euros on creation); two "
       "currencies among payables fail payables_single_currency (blocking), payables in another currency "
       "than receivables fail cash_outlook_single_currency (blocking); the dashboard names the one currency"),
    # --- supplier-document events -------------------------------------------------------------------
    _r("supplier_document_events", "id", "assumption", "__init__.py (merge per document)", "derive", "N11",
       PAYABLES, "absent: `{documentId}:{position}` (note N11); the history is replaced per document"),
    _r("supplier_document_events", "supplierDocumentId", "assumption", "client rows (request path)",
       "derive", "", PAYABLES, "absent: taken from the request path"),
    _r("supplier_document_events", "status", "assumption", "stg_invoicing__supplier_document_events.sql",
       "derive", "", PAYABLES, "absent: the next newer item's previousStatus, else the document's status"),
    _r("supplier_document_events", "previousStatus", "assumption", "supplier_payables.sql", "derive", "",
       PAYABLES, "absent: the next older item's status"),
    _r("supplier_document_events", "date", "assumption", "supplier_payables.sql (status as of)", "check",
       "supplier_status_as_of_known", PAYABLES, "absent: a past status is NULL unless lastUpdate or "
       "paymentDate settle it; supplier_status_as_of_known fails"),
    # --- webhooks -----------------------------------------------------------------------------------
    _r("webhooks", "read scope", "contract", "reader.py (403 -> note)", "note", "", (),
       "needs the default scope (read and write): not read with `read`, a sync note says so", "behaviour"),
    _r("webhooks", "enabled", "assumption", "raw only", "fine", "", (), "raw only"),
    _r("webhooks", "failures", "assumption", "raw only", "fine", "", (), "raw only"),
    # --- webhook deliveries (the doorbell: which record to re-read, never the data) ------------------
    _r("deliveries", "envelope id, event.eventId, event.data", "api-facts", "receiver.py, hint_events.py", "fine",
       "", (),
       "a delivery without them is refused (400) and spools nothing; the scheduled sync reads the change", "behaviour"),
    _r("deliveries", "record id in event.data", "contract",
       "hint_events.py (data.id, customerId, supplierId, supplierDocument.id)", "fine", "", (),
       "an event without it, or with an id outside 1-64 of A-Z a-z 0-9 _ - (record_ids.py; api-facts: 24 hex), is "
       "refused (422) and spools nothing; the payload is never loaded as data, the record is read "
       "from the API (a burst by a window of its list, whatever the window misses by id), the id one encoded path "
       "segment", "behaviour"),
    _r("deliveries", "portalId", "api-facts", "receiver.py, hint_apply.py (records' portalId)", "fine", "", (),
       "before an applying run learnt the portal's id from the records' portalId: accepted, present or absent; once "
       "learnt, absent or not the path portal's id: refused (422), nothing spooled", "behaviour"),
    _r("deliveries", "unsigned", "contract", "receiver.py (token path, optional HMAC)", "fine", "", (),
       "nothing is trusted from a delivery but which record to re-read: a secret token in the URL; the HMAC header is "
       "ours, off by default", "behaviour"),
    _r("deliveries", "delivered at least once", "api-facts", "hint_apply.py, the schedule", "fine", "", (),
       "lost: the next scheduled sync heals it (a lost deletion of a document or supplier: the daily reconcile); "
       "duplicated or reordered: one hint per record, the newest lastUpdate wins", "behaviour"),
)

# the lists the doctor samples, by the ledger's resource name
LIST_PATHS = {name: endpoint.path for name, endpoint in LISTS.items()}


def field_rows() -> tuple[LedgerRow, ...]:
    """The rows naming a JSON field of a record (what the doctor checks on sample pages)."""
    return tuple(row for row in LEDGER if row.kind == "field" and row.resource not in ("auth", "http", "lists"))
