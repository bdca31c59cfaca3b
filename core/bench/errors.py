"""The errors a user can fix, under one base class.

The CLI catches :class:`UserError` once and prints one line (exit code 2); anything
else is a bug in bench or a plugin and keeps its traceback. That split is why
``NotImplementedError`` (a ``RuntimeError``) or a plain ``RuntimeError`` are not user
errors: reporting them as one line would hide where the bug is.
"""

from __future__ import annotations

import sys


class UserError(Exception):
    """Something the user fixes: a configuration file, an option, the environment."""

    exit_code = 2


class OptionError(UserError, ValueError):
    """A command-line option whose value cannot be used (``--loads 1,x``, ``--set k``)."""


#: Errors of the runtime that a user fixes in the environment (broker not installed,
#: Spark master exits) but whose classes do not derive from :class:`UserError` yet; the
#: CLI treats them as if they did. Looked up only in modules already imported: an error
#: cannot come from a module that was never loaded. The broker, platform and Kubernetes
#: errors derive from UserError now; an entry goes once its class does.
ENVIRONMENT_ERRORS: tuple[tuple[str, str], ...] = (
    ("bench.runtime.spark.cluster", "SparkClusterError"),
    ("bench.runtime.prometheus", "PrometheusError"),
)


def is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, UserError):
        return True
    for module_name, class_name in ENVIRONMENT_ERRORS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return True
    return False
