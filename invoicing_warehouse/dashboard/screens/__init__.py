"""One module per dashboard page: layout only, figures from dashboard.cache (and through it dashboard.queries)."""
