"""The demo, beside the sandbox it runs on: `invoicing-warehouse demo` (command.py: a seeded sandbox, the
whole asset graph through Dagster, the marts' report of report.py), its `--follow` (follow.py) and the
hint feed straight from an in-process sandbox's event listener (hint_feed.py) that the tests and benchmarks
share. Not the product: it imports the sandbox, so it needs the `sandbox` extra; the product never imports it.
"""
