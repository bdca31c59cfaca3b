"""UC2 parameters: the forms they arrive in and the errors that name them (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest
from bench_uc2.params import Uc2Params


def test_uc2_params_accept_strings_from_the_command_line() -> None:
    p = Uc2Params.from_mapping({"windowSizeMs": "1000", "allowedLatenessMs": "0", "emitPeriodMs": 2500})
    assert (p.window_size_ms, p.allowed_lateness_ms, p.trigger_seconds) == (1000, 0, 2.5)
    assert Uc2Params.from_mapping({}).window_size_ms == 60_000
    assert Uc2Params.from_mapping({}).trigger_seconds is None


@pytest.mark.parametrize(
    "bad", [{"windowSizeMs": 0}, {"windowSizeMs": "abc"}, {"windowSizeMs": 1.5}, {"allowedLatenessMs": -1}]
)
def test_uc2_rejects_bad_params_naming_them(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Uc2Params.from_mapping(bad)
