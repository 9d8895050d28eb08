"""Injected as tests/catalog/conftest.py next to PyIceberg's own shared catalog tests.

Like tests/iceberg/pyiceberg_shared/conftest_trinity.py (whose lists of cases that cannot
apply it reuses), but each `catalog` is PyIceberg's RestCatalog talking to a trinityfs
REST server (in a thread, on 127.0.0.1, a free port) over a fresh local lakehouse.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.rest.server import ServerConfig, ServerThread

from .conftest_trinity import (  # copied next to this file by the test
    MULTI_LEVEL,
    MULTI_LEVEL_PARAMS,
    NOT_APPLICABLE,
    XFAIL_WORDING,
)

# Cases that cannot apply to any REST catalog: they need an exception the REST client
# never raises for that call, or a private method of PyIceberg's in-process catalogs.
NOT_APPLICABLE_REST = {
    "test_create_table_without_namespace": (
        "RestCatalog raises NoSuchIdentifierError for 'table' before sending anything"
    ),
    "test_create_namespace_with_empty_identifier": (
        "expects NoSuchNamespaceError from create_namespace(''); RestCatalog maps every "
        "create-namespace error but 409 to BadRequestError/RESTError (the server says 400)"
    ),
    "test_commit_table": "calls catalog._parse_metadata_version, which RestCatalog lacks",
}


def _make(name: str, warehouse: Path, roots: Path):
    from pyiceberg.catalog.rest import RestCatalog

    root = roots / f"lake-{uuid.uuid4().hex}"
    Lakehouse.create(str(root))
    # The cases create tables and namespaces at locations like /test/location, outside any
    # warehouse: they test catalog semantics, confinement is tested in tests/rest.
    config = ServerConfig(
        root=str(root), port=0, warehouse=f"file://{warehouse}", allow_any_location=True
    )
    server = ServerThread(config).start()
    return server, RestCatalog(name, uri=server.url)


@pytest.fixture
def catalog(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory):
    server, cat = _make("test_catalog", tmp_path, tmp_path_factory.mktemp("roots"))
    yield cat
    cat.close()
    server.stop()


@pytest.fixture
def catalog_with_warehouse(warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    server, cat = _make("test_catalog", warehouse, tmp_path_factory.mktemp("roots"))
    yield cat
    cat.close()
    server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        callspec = getattr(item, "callspec", None)
        ident = callspec.id if callspec is not None else ""
        if name in NOT_APPLICABLE:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {NOT_APPLICABLE[name]}"))
        elif name in NOT_APPLICABLE_REST:
            reason = NOT_APPLICABLE_REST[name]
            item.add_marker(pytest.mark.skip(reason=f"not applicable over REST: {reason}"))
        elif any(p in ident for p in MULTI_LEVEL_PARAMS):
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {MULTI_LEVEL}"))
        elif name in XFAIL_WORDING:
            item.add_marker(pytest.mark.xfail(reason=XFAIL_WORDING[name], strict=True))
