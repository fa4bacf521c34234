"""dlt's trace passes through the one scrubber (`invoicing_warehouse.engine.redaction`) before dlt keeps it.

dlt saves each run's trace, exceptions included, as `trace.pickle` in the pipeline's working folder, and hands it
to its tracking modules (telemetry, the dlthub platform). A failing step's exception text is whatever the failing
code said: a DuckDB ATTACH error repeats its whole connection string. dlt offers its tracking modules as the one
hook between the step's end and the save (`dlt.pipeline.trace.TRACKING_MODULES`, called before `save_trace`), so
`TraceRedaction` sits first in that list and replaces the failed step's texts by their redacted form.
"""

from __future__ import annotations

from typing import Any

from dlt.pipeline import trace as dlt_trace

from invoicing_warehouse.engine.redaction import redact


class TraceRedaction:
    """A dlt tracking module that redacts the exception texts of each step as it ends (the rest: no-ops)."""

    def on_start_trace(self, trace: Any, step: Any, pipeline: Any) -> None:
        """Nothing to redact yet."""

    def on_start_trace_step(self, trace: Any, step: Any, pipeline: Any) -> None:
        """Nothing to redact yet."""

    def on_end_trace_step(self, trace: Any, step: Any, pipeline: Any, step_info: Any, send_state: bool) -> None:
        """Replaces the ended step (the trace's last) by one whose exception texts are redacted."""
        if not trace.steps:
            return
        ended = trace.steps[-1]
        if ended.step_exception is None and not ended.exception_traces:
            return
        trace.steps[-1] = ended._replace(
            step_exception=redacted(ended.step_exception),
            exception_traces=redacted(ended.exception_traces),
        )

    def on_end_trace(self, trace: Any, pipeline: Any, send_state: bool) -> None:
        """The steps were redacted as they ended."""


def redacted(value: Any) -> Any:
    """`value` (texts, and lists, tuples and dicts of them, as dlt's exception traces are) with every text
    redacted; anything else as it is."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted(item) for item in value]
    if type(value) is tuple:  # a named tuple keeps its own shape: left as it is
        return tuple(redacted(item) for item in value)
    return value


def install_trace_redaction() -> None:
    """Puts `TraceRedaction` first among dlt's tracking modules (once per process): the modules after it, and
    the saved trace, see the redacted texts only."""
    if dlt_trace.TRACKING_MODULES is None:  # dlt.pipeline fills it when imported; never None once dlt is
        dlt_trace.TRACKING_MODULES = []
    modules = dlt_trace.TRACKING_MODULES
    if not any(isinstance(module, TraceRedaction) for module in modules):
        modules.insert(0, TraceRedaction())
