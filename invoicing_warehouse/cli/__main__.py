"""`python -m invoicing_warehouse.cli`: the same command as the `invoicing-warehouse` console script."""

from invoicing_warehouse.cli import entry

entry()
