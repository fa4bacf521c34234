"""The test harness shared by `tests/` and `bench/` (dev and test only; nothing of the product imports it).

`warehouse_truth`: the one comparison of the warehouse's raw tables with the sandbox's own records.
The rest drives scenarios against a sandbox: syncs in this process or a child process, SIGKILL crash
runs, chaos runs, malformed answers through a tampering proxy, and what a failed run must leave unchanged.
"""
