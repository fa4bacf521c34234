"""Webhooks: the receiver, its durable hint spool, applying hints to the warehouse, subscriptions."""
