"""The shell: the `invoicing-warehouse` command, every subcommand, the demo and its report. It sits on
top of every other package of the project and nothing imports it (docs/architecture.md)."""
