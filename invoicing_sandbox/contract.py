"""`ContractProfile`: what the sandbox serves where the contract (spec + api-facts) is silent.

The default profile is the sandbox as it always was: convenient fields and behaviours the contract never
promises. The strict profile serves only what `invoicing-api-v2.md` and `api-facts.md` state and takes the
other legal answer wherever they are silent. Every deviation is its own switch, so that a test can turn ONE
on (`dataclasses.replace(ContractProfile.default(), tie_order="shuffled")`) and prove the product survives
it. A profile only changes what is served (fields, values, list behaviour, headers, token lifetime); the
portal's records, totals and rules stay the same, so `Portal.snapshot` stays the ground truth. One exception,
`paid_invoice_versions`, lets the web application make an edit the default refuses (a new version of a
partly-paid invoice); the records it makes are still the ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

DELETED_CUSTOMER_MODES = ("listed", "flagged", "hidden")
# DELETE /customers/{id} of a customer with documents that are not drafts: "refused" (409, the sandbox's rule) or
# "kept" (soft-deleted all the same, as an archive: its documents stay listed and owed)
DELETED_CUSTOMER_DOCUMENTS = ("refused", "kept")
# GET /customers/{id} of a deleted customer hidden from lists: "flagged" (`deleted: true`) or "gone" (404)
HIDDEN_CUSTOMER_BY_ID = ("flagged", "gone")
TIE_ORDERS = ("id", "shuffled")
DATE_ONLY_ZONES = ("UTC", "Europe/Paris")
CREDIT_NOTE_SIGNS = ("positive", "negative")
# a new version of a VALIDATED invoice that has payments or credits: "refused" (400), or "usages_stay" (made,
# the usages staying on the replaced, CANCELED version)
PAID_INVOICE_VERSIONS = ("refused", "usages_stay")
# refunds (a transaction with amount < 0): "none" (never generated: the seeds as they always were), "served"
# (generated, with `refundedAmount` on the refunded payment), "unlinked" (generated; `refundedAmount` served 0,
# so the negative transaction is the only trace of a payment's refund)
REFUND_MODES = ("none", "served", "unlinked")
# currencies a profile may serve; "mixed": EUR or USD, by the record's id (a portal in two currencies)
CURRENCIES = ("EUR", "USD", "GBP", "CHF")
MIXED = "mixed"
# what `AccessToken-ExpireAt` an answer of 503 carries: the token's expiry, or the server's present
UNAVAILABLE_EXPIRE_AT = ("token", "present")
# families of fields the contract never names (the fields themselves: invoicing_sandbox/served.py INVENTED_FIELDS)
INVENTED_FIELD_FAMILIES = (
    "documents",
    "document_messages",
    "transactions",
    "transaction_usages",
    "suppliers",
    "supplier_documents",
    "supplier_document_events",
    "webhooks",
)
# the lists whose parameters the spec does not list ("parameter names are not shown" / none at all)
UNLISTED_PARAMETER_LISTS = ("suppliers", "supplier_documents", "webhooks")
# every list a client pages through (by resource name)
LIST_RESOURCES = ("customers", "items", "documents", "transactions", "transaction_usages", "suppliers",
                  "supplier_documents", "webhooks")


@dataclass(frozen=True)
class ContractProfile:
    """One switch per behaviour the contract does not promise (see invoicing_sandbox/README.md for each source)."""

    # families whose fields no spec/facts sentence names are left out of every served record
    invented_fields_omitted: tuple[str, ...] = ()
    # soft-deleted customers: "listed" (in lists, `deleted: true` + `deletedAt`), "flagged" (in lists,
    # `deleted: true`, no timestamp), "hidden" (absent from lists; GET by id: `deleted: true`, no timestamp)
    deleted_customers: str = "listed"
    # a customer whose documents are not all drafts: deletion refused (409) or made, its documents kept
    deleted_customer_documents: str = "refused"
    # with `deleted_customers="hidden"`: GET by id of a deleted customer serves it flagged, or answers 404
    hidden_customer_by_id: str = "flagged"
    # records with equal sort keys: "id" (stable, by id) or "shuffled" (a new order on every request)
    tie_order: str = "id"
    tie_seed: int = 0  # seed of the shuffled orders (deterministic runs)
    # the `Date` header's clock minus the clock that stamps `lastUpdate` (seconds; positive = ahead)
    date_header_skew_s: float = 0.0
    # lists answering 400 "unknown query parameter" for updatedSince/updatedUntil/orderBy/order
    window_params_refused_on: tuple[str, ...] = ()
    # lists answering 400 "unknown query parameter" for limit/skip, or ignoring both (the default page, 20,
    # from the first record, whatever they ask): the spec names no paging parameter for these lists
    paging_params_refused_on: tuple[str, ...] = ()
    paging_params_ignored_on: tuple[str, ...] = ()
    token_lifetime_s: int | None = None  # None: the config's `token_lifetime_s`
    max_page_size: int | None = None  # None: the config's `max_page_size`
    # (list, size) pairs: a maximum page of its own for these lists, below the one above (clamped or
    # refused by the config's `page_size_policy`, as every maximum)
    max_page_size_per_list: tuple[tuple[str, int], ...] = ()
    # date-only fields (emitDate, dueDate, date, issueDate, paymentDate): midnight of this zone, in UTC
    date_only_zone: str = "UTC"
    # spellings the contract does not give: served instead of the sandbox's own (filters accept them too)
    deposit_subtype_name: str = "DEPOSIT"
    supplier_credit_note_type: str = "creditNote"
    supplier_paid_status: str = "paid"
    # totals of credit notes (document subtype CREDIT_NOTE): "positive" or "negative"
    credit_note_sign: str = "positive"
    # amounts of supplier credit notes (type creditNote): "positive" or "negative"
    supplier_credit_note_sign: str = "positive"
    # documents served without `dueDate` (facts name it only as an input field; the spec not at all)
    due_date_omitted: bool = False
    # editing a partly-paid invoice (the web application): refused, or a new version with the usages left on
    # the replaced one (facts say only that the old version becomes CANCELED)
    paid_invoice_versions: str = "refused"
    # the one switch that changes the data as well as what is served: with "served" or "unlinked" the
    # generator refunds some overpayments and some credit notes (Portal.snapshot stays the ground truth)
    refunds: str = "none"
    # `currency` on documents and transactions: "" (not served, as always), a code of CURRENCIES, or "mixed"
    document_currency: str = ""
    # `currency` on supplier documents: "EUR" (spec: euros on creation), another code, or "mixed"
    supplier_document_currency: str = "EUR"
    # `AccessToken-ExpireAt` on a 503 answer: "token" (the token's expiry, as on every other answer) or
    # "present" (the server's present, on the clock stamping lastUpdate: a server that stamps its now)
    unavailable_expire_at: str = "token"
    # a change derived from another write keeps the changed record's `lastUpdate`: the version a new version
    # replaces turns CANCELED, and a supplier document's status changed by the application (not the API)
    derived_changes_keep_last_update: bool = False
    # (resource, field, value): a field no contract names, served on every record of that list, as a server
    # that grows a new field would (the product's schema notices, invoicing_warehouse/runs/schema_notices.py, are tested
    # on it)
    extra_fields: tuple[tuple[str, str, object], ...] = ()
    # GET /webhooks while people edit the subscriptions: every N-th answer of the list (0: never) is followed by
    # a change, the oldest subscription removed and a new one added (so a list that also ignores paging, see
    # `paging_params_ignored_on`, answers a shifted first page to the next request); the subscriptions are
    # the portal's records, so `Portal.snapshot` stays the ground truth
    subscriptions_churn_every: int = 0
    # GET /webhooks answers a token of the `read` scope too: the spec gives it "the global default (read and
    # write)", which the sandbox reads as `write` (README); a server may read it as either scope
    webhooks_listed_to_read_scope: bool = False

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("deleted_customers", self.deleted_customers, DELETED_CUSTOMER_MODES),
            ("deleted_customer_documents", self.deleted_customer_documents, DELETED_CUSTOMER_DOCUMENTS),
            ("hidden_customer_by_id", self.hidden_customer_by_id, HIDDEN_CUSTOMER_BY_ID),
            ("tie_order", self.tie_order, TIE_ORDERS),
            ("date_only_zone", self.date_only_zone, DATE_ONLY_ZONES),
            ("credit_note_sign", self.credit_note_sign, CREDIT_NOTE_SIGNS),
            ("supplier_credit_note_sign", self.supplier_credit_note_sign, CREDIT_NOTE_SIGNS),
            ("paid_invoice_versions", self.paid_invoice_versions, PAID_INVOICE_VERSIONS),
            ("refunds", self.refunds, REFUND_MODES),
            ("document_currency", self.document_currency, ("", *CURRENCIES, MIXED)),
            ("supplier_document_currency", self.supplier_document_currency, (*CURRENCIES, MIXED)),
            ("unavailable_expire_at", self.unavailable_expire_at, UNAVAILABLE_EXPIRE_AT),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        for name, values, allowed_names in (
            ("invented_fields_omitted", self.invented_fields_omitted, INVENTED_FIELD_FAMILIES),
            ("window_params_refused_on", self.window_params_refused_on, UNLISTED_PARAMETER_LISTS),
            ("paging_params_refused_on", self.paging_params_refused_on, UNLISTED_PARAMETER_LISTS),
            ("paging_params_ignored_on", self.paging_params_ignored_on, UNLISTED_PARAMETER_LISTS),
        ):
            unknown = set(values) - set(allowed_names)
            if unknown:
                raise ValueError(f"{name}: unknown names {sorted(unknown)}")
        for name, flag in (("due_date_omitted", self.due_date_omitted),
                           ("webhooks_listed_to_read_scope", self.webhooks_listed_to_read_scope),
                           ("derived_changes_keep_last_update", self.derived_changes_keep_last_update)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        for pair in self.max_page_size_per_list:
            if (not isinstance(pair, tuple) or len(pair) != 2 or pair[0] not in LIST_RESOURCES
                    or not isinstance(pair[1], int) or pair[1] < 1):
                raise ValueError(f"max_page_size_per_list: ({', '.join(LIST_RESOURCES)}, size >= 1) pairs, "
                                 f"got {pair!r}")
        both = set(self.paging_params_refused_on) & set(self.paging_params_ignored_on)
        if both:
            raise ValueError(f"paging parameters both refused and ignored on {sorted(both)}")
        if not isinstance(self.subscriptions_churn_every, int) or self.subscriptions_churn_every < 0:
            raise ValueError("subscriptions_churn_every must be an integer >= 0, "
                             f"got {self.subscriptions_churn_every!r}")
        if self.max_page_size is not None and self.max_page_size < 1:
            raise ValueError(f"max_page_size must be at least 1, got {self.max_page_size!r}")

    def list_max_page_size(self, resource: str) -> int | None:
        """The maximum page of `resource`: its own (`max_page_size_per_list`), else `max_page_size`, else
        None (the config's); the lower of the two when both are set."""
        own = [size for name, size in self.max_page_size_per_list if name == resource]
        sizes = [size for size in (*own, self.max_page_size) if size is not None]
        return min(sizes) if sizes else None

    @classmethod
    def default(cls) -> ContractProfile:
        """The sandbox as it always was (every convenience on)."""
        return cls()

    @classmethod
    def strict(cls) -> ContractProfile:
        """Only what spec + api-facts state; the other legal answer wherever they are silent."""
        return cls(
            invented_fields_omitted=INVENTED_FIELD_FAMILIES,
            deleted_customers="hidden",
            tie_order="shuffled",
            # ahead: the client's window end (Date - lag) then lies after writes still to come (README)
            date_header_skew_s=10.0,
            window_params_refused_on=UNLISTED_PARAMETER_LISTS,
            token_lifetime_s=20,
            max_page_size=50,
            # nothing says every list has one maximum: the newer supplier documents get a smaller one
            max_page_size_per_list=(("supplier_documents", 30),),
            date_only_zone="Europe/Paris",
        )

    @classmethod
    def named(cls, name: str | ContractProfile) -> ContractProfile:
        """`"default"` or `"strict"` (a profile passes through): for the command line and fixtures."""
        if isinstance(name, ContractProfile):
            return name
        presets = {"default": cls.default, "strict": cls.strict}
        if name not in presets:
            raise ValueError(f"unknown contract profile {name!r}: use default or strict")
        return presets[name]()

    @property
    def is_default(self) -> bool:
        """True when nothing differs from the default profile (the fast paths stay as they were)."""
        return self == ContractProfile()
