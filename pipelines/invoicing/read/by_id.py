"""Records read one by one: GET /<resource>/{id} for a set of ids, paced by the client's one limiter.

The applying run of webhook hints (webhooks/hint_apply.py) reads the records its hints name this way, and the
regular sync the parents its loaded rows name but it did not load (load/parents.py). A 404 says the record is
gone; another 4xx (or an answer that is not the record asked for) is that record's alone and is reported
beside the others; failures that are not the record's (credentials, rate limit, server errors) raise.
Ids go into request paths as one encoded segment (record_ids.record_path), whatever they hold.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.record_ids import record_path
from pipelines.invoicing.settings import ENDPOINTS

FETCHERS = 8  # GETs in flight at once: the shared limiter paces them, the threads hide the latency
# Answers that say something about the client or the service, not about the record asked for: the run fails.
# Any other 4xx (400, 405, 410, 414, 422...) is the record's alone.
NOT_THE_RECORDS = frozenset({401, 403, 408, 429})


def fetch_by_id(client: InvoicingClient, wanted: dict[str, list[str]]
                ) -> tuple[dict[str, dict[str, dict]], dict[str, list[str]], dict[tuple[str, str], str]]:
    """GET /<resource>/{id} for every wanted id: (records by resource and id, ids answered 404, why each
    record the API refused alone was not read, by (resource, id))."""
    jobs = [(name, record_id) for name, ids in wanted.items() for record_id in ids]

    def one(job: tuple[str, str]) -> tuple[str, str, dict | str | None]:
        name, record_id = job
        try:
            record = client.get(record_path(ENDPOINTS[name].path, record_id), tag=name)
        except InvoicingApiError as error:
            if error.status == 404:
                return name, record_id, None
            if error.status is not None and 400 <= error.status < 500 and error.status not in NOT_THE_RECORDS:
                return name, record_id, f"GET {ENDPOINTS[name].path}/{{id}}: HTTP {error.status}"
            raise
        if not isinstance(record, dict) or str(record.get("id")) != record_id:
            return name, record_id, f"GET {ENDPOINTS[name].path}/{{id}}: the answer is not the record asked for"
        return name, record_id, record

    records: dict[str, dict[str, dict]] = {name: {} for name in wanted}
    gone: dict[str, list[str]] = {name: [] for name in wanted}
    refused: dict[tuple[str, str], str] = {}
    with ThreadPoolExecutor(FETCHERS, thread_name_prefix="by-id") as pool:
        for name, record_id, record in pool.map(one, jobs):
            if record is None:
                gone[name].append(record_id)
            elif isinstance(record, str):
                refused[(name, record_id)] = record
            else:
                records[name][record_id] = record
    return records, gone, refused
