"""`ContractProfile`: what the sandbox serves where the contract (spec + api-facts) is silent.

The default profile is the sandbox as it always was: convenient fields and behaviours the contract never
promises. The strict profile serves only what `invoicing-api-v2.md` and `api-facts.md` state and takes the
other legal answer wherever they are silent. Every deviation is its own switch, so that a test can turn ONE
on (`dataclasses.replace(ContractProfile.default(), tie_order="shuffled")`) and prove the product survives
it. A profile only changes what is served (fields, values, list behaviour, headers, token lifetime); the
portal's records, totals and rules stay the same, so `Portal.snapshot` stays the ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

DELETED_CUSTOMER_MODES = ("listed", "flagged", "hidden")
TIE_ORDERS = ("id", "shuffled")
DATE_ONLY_ZONES = ("UTC", "Europe/Paris")
CREDIT_NOTE_SIGNS = ("positive", "negative")
# what `AccessToken-ExpireAt` an answer of 503 carries: the token's expiry, or the server's present
UNAVAILABLE_EXPIRE_AT = ("token", "present")
# families of fields the contract never names (the fields themselves: sandbox/served.py INVENTED_FIELDS)
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


@dataclass(frozen=True)
class ContractProfile:
    """One switch per behaviour the contract does not promise (see sandbox/README.md for each source)."""

    # families whose fields no spec/facts sentence names are left out of every served record
    invented_fields_omitted: tuple[str, ...] = ()
    # soft-deleted customers: "listed" (in lists, `deleted: true` + `deletedAt`), "flagged" (in lists,
    # `deleted: true`, no timestamp), "hidden" (absent from lists; GET by id: `deleted: true`, no timestamp)
    deleted_customers: str = "listed"
    # records with equal sort keys: "id" (stable, by id) or "shuffled" (a new order on every request)
    tie_order: str = "id"
    tie_seed: int = 0  # seed of the shuffled orders (deterministic runs)
    # the `Date` header's clock minus the clock that stamps `lastUpdate` (seconds; positive = ahead)
    date_header_skew_s: float = 0.0
    # lists answering 400 "unknown query parameter" for updatedSince/updatedUntil/orderBy/order
    window_params_refused_on: tuple[str, ...] = ()
    token_lifetime_s: int | None = None  # None: the config's `token_lifetime_s`
    max_page_size: int | None = None  # None: the config's `max_page_size`
    # date-only fields (emitDate, dueDate, date, issueDate, paymentDate): midnight of this zone, in UTC
    date_only_zone: str = "UTC"
    # spellings the contract does not give: served instead of the sandbox's own (filters accept them too)
    deposit_subtype_name: str = "DEPOSIT"
    supplier_credit_note_type: str = "creditNote"
    supplier_paid_status: str = "paid"
    # totals of credit notes (document subtype CREDIT_NOTE): "positive" or "negative"
    credit_note_sign: str = "positive"
    # `AccessToken-ExpireAt` on a 503 answer: "token" (the token's expiry, as on every other answer) or
    # "present" (the server's present, on the clock stamping lastUpdate: a server that stamps its now)
    unavailable_expire_at: str = "token"
    # a change derived from another write keeps the changed record's `lastUpdate`: the version a new version
    # replaces turns CANCELED, and a supplier document's status changed by the application (not the API)
    derived_changes_keep_last_update: bool = False

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("deleted_customers", self.deleted_customers, DELETED_CUSTOMER_MODES),
            ("tie_order", self.tie_order, TIE_ORDERS),
            ("date_only_zone", self.date_only_zone, DATE_ONLY_ZONES),
            ("credit_note_sign", self.credit_note_sign, CREDIT_NOTE_SIGNS),
            ("unavailable_expire_at", self.unavailable_expire_at, UNAVAILABLE_EXPIRE_AT),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if not isinstance(self.derived_changes_keep_last_update, bool):
            raise TypeError(f"derived_changes_keep_last_update must be a bool, got "
                             f"{self.derived_changes_keep_last_update!r}")
        for name, values, allowed_names in (
            ("invented_fields_omitted", self.invented_fields_omitted, INVENTED_FIELD_FAMILIES),
            ("window_params_refused_on", self.window_params_refused_on, UNLISTED_PARAMETER_LISTS),
        ):
            unknown = set(values) - set(allowed_names)
            if unknown:
                raise ValueError(f"{name}: unknown names {sorted(unknown)}")

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
