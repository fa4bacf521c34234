"""The check that ties the warehouse back to the API: every customer's open total in
`marts.receivables_by_customer` equals the `dueAmount` the API serves now.

It reads GET /customers live through the project's one client (same base URL and credentials as
the sync). A customer changed upstream since the sync (its `lastUpdate` is newer than the row
loaded) is skipped, not failed: the next sync will bring it, and this keeps the check free of races
with users working in the application meanwhile. The sandbox moves a customer's `lastUpdate` when
its `dueAmount` moves; were the real service not to, a stale raw row would show here as a mismatch.
It checks the portal of the run's partition (its rows only, its own API and credentials).
"""

from collections.abc import Iterator
from decimal import Decimal

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetKey,
    MetadataValue,
    ResourceParam,
    asset_check,
)

from assets.error_boundary import redacted_errors
from assets.portals import load_portals
from assets.resources import InvoicingApiResource, WarehouseResource
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.load.portal_sync import portal_settings
from pipelines.invoicing.settings import ENDPOINTS
from warehouse_engine.names import DEFAULT_PORTAL, PORTAL_COLUMN

PARTITION_TAG = "dagster/partition"  # the run's partition: the portal it synced

RECEIVABLES_BY_CUSTOMER = AssetKey(["marts", "receivables_by_customer"])
PAGE_SIZE = 100  # the service's maximum page (api-facts.md); the loop ends on an empty page, not a short one
MAX_PAGES = 10_000
SAMPLE_SIZE = 10


def api_customers(base_url: str, client_id: str, client_secret: str) -> Iterator[dict]:
    """Every customer the API lists (deleted ones included), oldest change first."""
    with InvoicingClient(base_url, client_id, client_secret) as client:
        skip = 0
        for _ in range(MAX_PAGES):
            page = client.get(
                ENDPOINTS["customers"].path,
                {"orderBy": "lastUpdate", "order": 1, "limit": PAGE_SIZE, "skip": skip},
                tag="customers",
            )
            if not page:
                return
            yield from page
            skip += len(page)
        raise RuntimeError(f"GET {ENDPOINTS['customers'].path}: more than {MAX_PAGES} pages, stopped")


def _cents(value) -> Decimal:
    return Decimal(str(value if value is not None else 0)).quantize(Decimal("0.01"))


@asset_check(
    asset=RECEIVABLES_BY_CUSTOMER,
    name="total_open_matches_api_due_amount",
    description="Each customer's total_open equals the API's dueAmount (GET /customers, read live).",
)
def total_open_matches_api_due_amount(
    context: AssetCheckExecutionContext, invoicing_api: ResourceParam[InvoicingApiResource], warehouse: WarehouseResource
) -> AssetCheckResult:
    """Compares marts.receivables_by_customer.total_open of the run's portal with GET /customers dueAmount."""
    with redacted_errors():  # what reaches Dagster's event log passes the scrubber (error_boundary.py)
        portal_id = context.run.tags.get(PARTITION_TAG, DEFAULT_PORTAL)
        portal = load_portals().get(portal_id)
        if portal is not None and portal.from_file:
            settings = portal_settings(portal)
            login = (settings.base_url, settings.client_id, settings.client_secret)
        else:  # the portal `default` of the `invoicing_api` resource
            settings = invoicing_api.settings()
            login = (settings.base_url, settings.client_id, settings.client_secret)
        with warehouse.connect(read_only=True) as connection:
            open_totals = dict(
                connection.execute(f"select customer_id, total_open from marts.receivables_by_customer "
                                   f"where {PORTAL_COLUMN} = ?", [portal_id]).fetchall()
            )
            loaded_at = {
                customer_id: last_update
                for customer_id, last_update in connection.execute(
                    "select id, strftime(last_update at time zone 'UTC', '%Y-%m-%dT%H:%M:%SZ') "
                    f"from invoicing_raw.customers where {PORTAL_COLUMN} = ?", [portal_id]
                ).fetchall()
            }
        compared = skipped = not_served = 0
        mismatches: list[str] = []
        for customer in api_customers(*login):
            customer_id = customer["id"]
            if "dueAmount" not in customer:
                not_served += 1  # nothing to compare with: absent is not 0 (docs/contract.md, A13)
                continue
            if loaded_at.get(customer_id) != customer.get("lastUpdate"):
                skipped += 1  # created or changed upstream since the sync
                continue
            compared += 1
            expected, actual = _cents(customer.get("dueAmount")), _cents(open_totals.get(customer_id))
            if expected != actual:
                mismatches.append(f"{customer_id}: API dueAmount {expected}, mart total_open {actual}")
        return AssetCheckResult(
            passed=not mismatches,
            severity=AssetCheckSeverity.ERROR,
            description=(
                f"{len(mismatches)} of {compared} customers differ"
                if mismatches
                else None
                if compared
                else "no customer could be compared (none loaded and unchanged, or dueAmount not served)"
            ),
            metadata={
                "customers_compared": MetadataValue.int(compared),
                "customers_changed_since_sync": MetadataValue.int(skipped),
                "customers_without_due_amount": MetadataValue.int(not_served),
                "mismatches": MetadataValue.int(len(mismatches)),
                "sample": MetadataValue.json(mismatches[:SAMPLE_SIZE]),
            },
        )
