"""The shell: the `invoicing-warehouse` command and every subcommand (`sandbox` and `demo`, which are not the
product, are reached by module name: cli.py). It sits on top of the product's packages; only the demo and the
tests import it (docs/architecture.md)."""
