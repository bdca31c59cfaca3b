"""Properties of the reference's SLO types that no other test showed: each changes the
verdict.

Why: a property an SLO type declares but never reads would be accepted and ignored
(tests/unit/test_no_inert_setting.py points here).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from bench.api import Series, SloContext
from bench.plugins import load_plugins

SLOS = load_plugins().slos
T0 = 1_700_000_000.0


def _series(values: list[float]) -> Series:
    return Series([T0 + 5 * i for i in range(len(values))], values)


def _passed(slo: str, properties: dict[str, Any], values: list[float], load: float = 100,
            resources: float = 5) -> bool:
    return SLOS[slo].check([_series(values)], SloContext(load, resources, 0, properties, load_rate=None)).passed


@pytest.mark.parametrize(("properties", "passes", "fails"), [
    ({"thresholdRelToLoad": 0.01}, {"load": 30_000}, {"load": 10_000}),  # 300 / 100 records dropped: 200 seen
    ({"thresholdRelToResources": 50}, {"resources": 5}, {"resources": 3}),  # 250 / 150
    ({"thresholdFromExpression": "L*R"}, {"load": 100, "resources": 3}, {"load": 10, "resources": 3}),  # 300 / 30
])
def test_dropped_records_threshold_forms_set_the_bound(properties: dict[str, Any], passes: dict[str, float],
                                                       fails: dict[str, float]) -> None:
    values = [0, 100, 200]
    assert _passed("dropped records", properties, values, **passes)
    assert not _passed("dropped records", properties, values, **fails)


def test_dropped_records_ratio_sets_the_bound_relative_to_the_load() -> None:
    values = [0, 50, 99]  # 99 dropped at load 10,000
    assert _passed("dropped records ratio", {"ratio": 0.01}, values, load=10_000)
    assert not _passed("dropped records ratio", {"ratio": 0.001}, values, load=10_000)


@pytest.fixture
def refusing_checker() -> Iterator[str]:
    """An external SLO checker that answers false to everything."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"false")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("key", ["externalSloUrl", "externalSloChecker"])
@pytest.mark.parametrize(("slo", "properties"), [
    ("lag trend", {"threshold": 1000}),
    ("lag trend ratio", {"ratio": 10}),
    ("dropped records", {"threshold": 1000}),
    ("dropped records ratio", {"ratio": 1}),
])
def test_the_external_checker_of_a_reference_slo_decides(refusing_checker: str, slo: str,
                                                         properties: dict[str, Any], key: str) -> None:
    values = [0, 0, 0, 0]
    assert _passed(slo, properties, values), "the data alone pass"
    assert not _passed(slo, {**properties, key: refusing_checker}, values), "the checker's no is the verdict"


def test_generic_sli_names_the_series_judged_and_a_query_of_another_is_refused() -> None:
    generic = SLOS["generic"]
    assert generic.sli_name({"sli": "lag"}) == "lag" and generic.sli_name({"sli": "input-rate"}) == "input-rate"
    generic.validate({"sli": "lag", "threshold": 1, "promQLQuery": "sum by(group)(kafka_consumergroup_group_lag >= 0)"})
    with pytest.raises(ValueError, match="promQLQuery: 'sum\\(foo\\)' is not the query of sli 'lag'"):
        generic.validate({"sli": "lag", "threshold": 1, "promQLQuery": "sum(foo)"})


def test_latency_threshold_and_aggregations_decide() -> None:
    fast_then_slow = [_series([100, 100, 100, 5000]), _series([100, 5000, 5000, 5000]), _series([100, 100, 100, 100])]

    def passed(**properties: Any) -> bool:
        ctx = SloContext(100, 1, 0, {"threshold": 1000, **properties}, load_rate=None)
        return SLOS["latency"].check(fast_then_slow, ctx).passed

    assert passed() and not passed(threshold=50)  # medians 100, 5000, 100: their median 100
    assert not passed(queryAggregation="max")  # maxima 5000, 5000, 100
    assert not passed(repetitionAggregation="max")  # the worst repetition's median 5000
