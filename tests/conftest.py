"""Shared test settings: deterministic hypothesis runs, and the path of the shared data."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("sdckit", derandomize=True, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("sdckit")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The folder of reference data beside the checkout; skips when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data folder {SHARED_DATA} is absent (it sits beside the checkout as ../shared)")
    return SHARED_DATA


def shared_file(name: str) -> Path:
    """A file of ../shared/data, skipping the test with a reason when it is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"reference file {path} is absent (../shared/data beside the checkout)")
    return path
