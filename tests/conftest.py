"""Shared fixtures: a real S3 API server for the tests marked ``s3``.

Markers (s3, slow, fuse, spark, stress) are registered in pyproject.toml.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

S3_BUCKET = "trinityfs-test"


@pytest.fixture(scope="session")
def s3_bucket() -> str:
    """The bucket `s3_storage_options` creates."""
    return S3_BUCKET


@pytest.fixture(scope="session")
def s3_storage_options(s3_bucket: str) -> Iterator[dict[str, Any]]:
    """Storage options (endpoint, dummy credentials, region) of a moto S3 server."""
    from s3_server import moto_s3  # imported here: only S3 tests pay for moto

    with moto_s3(s3_bucket) as options:
        yield options


pytest_plugins = ["lake_fixtures"]
