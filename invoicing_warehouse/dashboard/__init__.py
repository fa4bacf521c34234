"""The finance dashboard: a Streamlit app over the marts of the readers' copy (`invoicing-warehouse dashboard`).

Modules, one role each: `source` (where figures come from: the published marts, or the same SQL models
built as of another date in memory), `queries` (the SQL each page needs), `freshness` (sync and check
state of the readers' copy), `cache` (per-snapshot caching for Streamlit), `formatting` (EUR and CSV),
`screens/*` (one per page, layout only), `app` (the entry point Streamlit runs).
"""
