"""structlog set-up: readable on a terminal, JSON lines when asked (for log shippers)."""

from __future__ import annotations

import logging
import sys

import structlog


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is when a line is logged, not the one at set-up:
    a caller that swaps stderr after configuring (a test's capture, a library that
    redirects it) would otherwise leave every later log line writing to a closed file."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(fmt: str = "console", verbosity: int = 0) -> None:
    level = logging.DEBUG if verbosity else logging.INFO  # -v: debug lines too (-vv: also tracebacks)
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)
