"""The demo, beside the sandbox it runs on: `invoicing-warehouse demo` (command.py: a seeded sandbox, the
whole asset graph through Dagster, the marts' report of report.py), its `--follow` (follow.py) and the
hint feed straight from an in-process sandbox's event listener (hint_feed.py) that the tests and benchmarks
share. It ships in the product's wheel but is not the product: it imports the emulator (invoicing_sandbox, the only
module of invoicing_warehouse allowed to: import-linter), so it needs the `sandbox` extra; the product never imports
it.
"""
