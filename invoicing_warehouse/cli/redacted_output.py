"""The command line's output passes through the one scrubber (`invoicing_warehouse.engine.redaction`): whatever a
subcommand, a library's log handler or an unexpected traceback writes to stdout or stderr leaves without a
registered secret or a password-shaped value.

`entry` (cli.py) swaps `sys.stdout` and `sys.stderr` for `RedactingStream`s before anything runs. Each `write`
is redacted whole: `print` writes a message in one call and a traceback line by line, so a secret never straddles
two calls. Writes that go to the file descriptors themselves (a child process's output) are not Python's to see;
the product prints none of its secrets there.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from invoicing_warehouse.engine.redaction import redact


class RedactingStream:
    """A text stream that writes `redact(text)` to the stream it wraps; everything else is the wrapped one's."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        """Writes the redacted text; returns the length of the text given (what callers count)."""
        self.inner.write(redact(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Writes each line redacted."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flushes the wrapped stream."""
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def redact_standard_streams() -> None:
    """Wraps `sys.stdout` and `sys.stderr` (once) so that everything printed from now on is redacted."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
