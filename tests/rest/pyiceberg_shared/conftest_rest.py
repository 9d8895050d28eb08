"""Injected as tests/catalog/conftest.py next to PyIceberg's own shared catalog tests.

Like tests/iceberg/pyiceberg_shared/conftest_trinity.py (whose lists of cases that cannot
apply it reuses), but each `catalog` is PyIceberg's RestCatalog talking to a trinityfs
REST server (in a thread, on 127.0.0.1, a free port) over a fresh local lakehouse.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from trinityfs import Lakehouse
from trinityfs.rest.server import ServerConfig, ServerThread

from .conftest_trinity import catalog_fixtures, mark_cases  # copied next to this file

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


@contextmanager
def _rest_catalog(name: str, warehouse: Path, roots: Path) -> Iterator[Any]:
    from pyiceberg.catalog.rest import RestCatalog

    root = roots / f"lake-{uuid.uuid4().hex}"
    Lakehouse.create(str(root))
    # The cases create tables and namespaces at locations like /test/location, outside any
    # warehouse: they test catalog semantics, confinement is tested in tests/rest.
    config = ServerConfig(
        root=str(root), port=0, warehouse=f"file://{warehouse}", allow_any_location=True
    )
    server = ServerThread(config).start()
    cat = RestCatalog(name, uri=server.url)
    try:
        yield cat
    finally:
        cat.close()
        server.stop()


catalog, catalog_with_warehouse = catalog_fixtures(_rest_catalog)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_cases(items, NOT_APPLICABLE_REST)
