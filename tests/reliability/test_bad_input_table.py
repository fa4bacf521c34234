"""Issue 7, point 3: bad input, each with the behaviour a user would want, printed as a table
(input | served by | pass | behaviour), one test result per case. See
harness/bad_input_cases.py for the cases, who serves each (the sandbox, a closed port, or the
tamper proxy in front of the sandbox) and the exact checks. The cases run the `invoicing-warehouse
sync` command's own entry point in this process (start-up of a new interpreter per case would cost
most of the time budget); crash safety and the secret scan run it as a separate process."""

from __future__ import annotations

import pytest

from harness.bad_input_cases import CASE_TITLES, BadInputSuite, format_table

SECRET = "S3CRET-badinput-5e1c"


@pytest.fixture(scope="module")
def bad_input_results(tmp_path_factory, module_sandbox_factory):
    """Runs every case once against one sandbox; prints the table."""
    sb = module_sandbox_factory(seed=23, scale=60, rate_limit_per_s=0, client_secret=SECRET, real_date=True)
    # unpaced (`--rate-limit 0`): the sandbox's own limit is off and no case is about pacing
    suite = BadInputSuite(sb, tmp_path_factory.mktemp("bad_input"), SECRET, sync_args=("--rate-limit", "0"))
    results = suite.run_all()
    print("\n" + format_table(results))
    return {result.case: result for result in results}


@pytest.mark.parametrize("case", CASE_TITLES)
def test_bad_input_gets_the_wanted_behaviour(bad_input_results, case):
    result = bad_input_results[case]
    assert result.passed, f"{case}: {result.behaviour}\n" + "\n".join(result.problems)
