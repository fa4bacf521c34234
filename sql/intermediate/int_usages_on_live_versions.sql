-- ---
-- description: every usage with invoice_id = the live version of the invoice it settles.
-- materialized: view
-- grain: [portal_id, usage_id]
-- ---
-- every usage (payment or credit note) with invoice_id = the live version of the document it settles.
-- editing a validated document creates a new version and turns the old one CANCELED (api-facts), and the
-- contract does not say where the usages made before the edit go: a server may leave them on the replaced
-- version. they still settle the same document, so they count for its live version; usage_invoice_id keeps the
-- version the server holds the usage on. the chain is followed through either link (prevDoc of the newer
-- version, nextDoc of the older one). a usage on a version without a live successor keeps its invoice_id
-- (invoices_exist judges it); a version with two live successors (a forked chain) counts for the first by id.

with recursive usages as (
    select * from staging.stg_invoicing__transaction_usages
),

versions as (
    select * from staging.stg_invoicing__document_versions
),

links as (
    select portal_id, previous_version_id as older_id, document_id as newer_id
    from versions
    where previous_version_id is not null
    union
    select portal_id, document_id as older_id, next_version_id as newer_id
    from versions
    where next_version_id is not null
),

-- (version, live version) pairs, walking back from each live version; `union` ends on a cyclic chain
live_of (portal_id, version_id, live_id) as (
    select portal_id, document_id, document_id
    from versions
    where not is_superseded and (previous_version_id is not null or document_id in (select newer_id from links))
    union
    select live_of.portal_id, links.older_id, live_of.live_id
    from live_of
    inner join links on links.portal_id = live_of.portal_id and links.newer_id = live_of.version_id
),

live_version as (
    select portal_id, version_id, min(live_id) as live_id
    from live_of
    group by portal_id, version_id
),

final as (
    select
        usages.* replace (coalesce(live_version.live_id, usages.invoice_id) as invoice_id),
        usages.invoice_id as usage_invoice_id
    from usages
    left join live_version
        on live_version.portal_id = usages.portal_id and live_version.version_id = usages.invoice_id
)

select * from final
