"""Shared fixtures. The real raw files come from the offline mirror named by SHUFFLEDP_DATA_MIRROR
(CI sets it to ../shared/data); without it, tests that need real data skip, except on CI where
its absence is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    value = os.environ.get("SHUFFLEDP_DATA_MIRROR")
    if not value:
        if os.environ.get("CI"):
            pytest.fail("CI must set SHUFFLEDP_DATA_MIRROR to the offline data mirror")
        pytest.skip("SHUFFLEDP_DATA_MIRROR is not set: no offline copy of the real raw files")
    path = Path(value)
    if not path.is_dir():
        pytest.fail(f"SHUFFLEDP_DATA_MIRROR={value} is not a folder")
    return path
