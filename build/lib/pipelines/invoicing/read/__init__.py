"""Reading a portal: frozen windows, keyset and skip paging, the producer threads of a run, records to rows."""
