"""`python -m invoicing_warehouse.dashboard.serve <arguments of streamlit run> -- --warehouse PATH`: Streamlit's own
`streamlit run`, in this process, after the warm-up (`invoicing_warehouse.dashboard.warm_up`), so the first visitor does
not pay for the imports and the landing page's queries. What `invoicing-warehouse dashboard` execs."""

from __future__ import annotations

import logging
import sys
import threading

from invoicing_warehouse.dashboard.host_guard import install as install_host_guard
from invoicing_warehouse.dashboard.source import warehouse_argument
from invoicing_warehouse.dashboard.warm_up import warm_up, warm_up_trends


def main() -> None:
    """Warms up, then runs `streamlit run` with this process's arguments (never returns)."""
    arguments = sys.argv[1:]
    script_arguments = arguments[arguments.index("--") + 1:] if "--" in arguments else []
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("invoicing_warehouse.dashboard").addHandler(handler)
    logging.getLogger("invoicing_warehouse.dashboard").setLevel(logging.INFO)
    # before the server listens: a visitor who can connect finds the pages imported and the figures cached
    warehouse = warehouse_argument(script_arguments)
    warm_up(warehouse)
    # the month-end builds of Trends take too long to wait for: beside the server, at a low priority
    threading.Thread(target=warm_up_trends, args=(warehouse,), name="trends-warm-up", daemon=True).start()
    from streamlit.web import cli

    install_host_guard()  # every request's Host against server.allowedHosts, HTTP routes included

    sys.argv = ["streamlit", "run", *arguments]
    cli.main()


if __name__ == "__main__":
    main()
