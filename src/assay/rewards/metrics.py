"""The reward server's counters, rendered in Prometheus' text format for ``GET /metrics``.

Example:
    >>> m = ServerMetrics()
    >>> m.observe("/v1/rewards", 200, 0.012, items=3)
    >>> 'assay_requests_total{route="/v1/rewards",status="200"} 1' in m.render({})
    True
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Mapping

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServerMetrics:
    def __init__(self) -> None:
        self.requests: Counter[tuple[str, int]] = Counter()
        self.rejected: Counter[str] = Counter()
        self.aborted: Counter[str] = Counter()  # clients gone mid-body ("upload") or mid-scoring
        self.items = 0
        self.in_flight = 0
        self.latency_buckets: dict[str, list[int]] = {}
        self.latency_sum: defaultdict[str, float] = defaultdict(float)
        self.latency_count: Counter[str] = Counter()

    def observe(self, route: str, status: int, seconds: float, *, items: int = 0) -> None:
        self.requests[(route, status)] += 1
        self.items += items
        buckets = self.latency_buckets.setdefault(route, [0] * (len(BUCKETS) + 1))
        buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.latency_sum[route] += seconds
        self.latency_count[route] += 1

    def render(self, gauges: Mapping[str, float]) -> str:
        lines = ["# TYPE assay_requests_total counter"]
        for (route, status), n in sorted(self.requests.items()):
            lines.append(f'assay_requests_total{{route="{route}",status="{status}"}} {n}')
        lines.append("# TYPE assay_rejected_total counter")
        for reason, n in sorted(self.rejected.items()):
            lines.append(f'assay_rejected_total{{reason="{reason}"}} {n}')
        lines.append("# TYPE assay_aborted_total counter")
        for stage in ("upload", "scoring"):
            lines.append(f'assay_aborted_total{{stage="{stage}"}} {self.aborted[stage]}')
        lines += ["# TYPE assay_reward_items_total counter", f"assay_reward_items_total {self.items}",
                  "# TYPE assay_requests_in_flight gauge", f"assay_requests_in_flight {self.in_flight}",
                  "# TYPE assay_request_seconds histogram"]
        for route, buckets in sorted(self.latency_buckets.items()):
            cumulative = 0
            for bound, n in zip((*BUCKETS, float("inf")), buckets):
                cumulative += n
                le = "+Inf" if bound == float("inf") else repr(bound)
                lines.append(f'assay_request_seconds_bucket{{route="{route}",le="{le}"}} {cumulative}')
            lines.append(f'assay_request_seconds_sum{{route="{route}"}} {self.latency_sum[route]:.6f}')
            lines.append(f'assay_request_seconds_count{{route="{route}"}} {self.latency_count[route]}')
        for name, value in sorted(gauges.items()):
            lines += [f"# TYPE assay_{name} gauge", f"assay_{name} {value:g}"]
        return "\n".join(lines) + "\n"
