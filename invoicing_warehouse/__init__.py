"""The `invoicing-warehouse` command and the glue that spans the project's packages."""
