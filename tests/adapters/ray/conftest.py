"""One local Ray runtime (2 CPUs, no dashboard, no usage stats) for tests/adapters/ray.

Ray binds the machine's own address (it replaces 127.0.0.1 with it); nothing leaves the machine.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")

RAY_WARNINGS = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:ray(\..*)?$")
"""Ray's own deprecation notices (its modules warn about its own settings) are not ours."""


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[str]:
    """Start Ray once for the package (it takes seconds); yields the cluster's address.

    Actors import the test scorers by name, so the repository root is on their path.
    """
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    import ray  # noqa: PLC0415 - only the Ray tests need it

    context = ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}},
    )
    data_context = ray.data.DataContext.get_current()
    data_context.enable_progress_bars = False
    data_context.print_on_execution_start = False
    try:
        yield context.address_info["address"]
    finally:
        ray.shutdown()


@pytest.fixture
def pg_url() -> str:
    """The PostgreSQL store several workers share (CI starts it: .ci/postgres.sh)."""
    if DSN is None:
        pytest.skip("SCORECORE_TEST_POSTGRES_DSN unset: several Ray workers need a shared "
                    "PostgreSQL store (.ci/run starts one)")
    return DSN


@pytest.fixture
def batch_id() -> str:
    """A batch id no other test uses (the tests share the default table)."""
    return f"ray-{uuid.uuid4().hex[:10]}"
