"""A new table or view name the catalog refuses was only checked by the catalog commit,
after files had been written for it: a table name over the file system's 255 bytes made
PyIceberg's metadata write fail, REST answering 500 InternalServerError (OSError); a view
whose name is not in Unicode NFC was refused (400) but its metadata file stayed; and a
Spark write to a new table so named ran every task, wrote its data files, and only the
commit refused the name (they stayed). Now the catalog's name rules (characters, length,
reserved names, NFC) run before anything is written: InvalidNameError / NameTooLongError
(ValueError), REST 400, Spark's plan refuses; no file is written."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
REST_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}
VIEW_VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 0,
    "summary": {},
    "default-namespace": ["ns"],
    "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
}
LONG = "x" * 300  # over the lakehouse's 100 bytes and the file system's 255
NFD = unicodedata.normalize("NFD", "é")


def _lake(tmp_path: Path) -> str:
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    return root


def _files(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), root)
        for d, _, fs in os.walk(os.path.join(root, "warehouse"))
        for f in fs
    )


def test_rest_refuses_before_writing(tmp_path):
    root = _lake(tmp_path)
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            for name in (LONG, NFD):
                table = http.post(
                    "/namespaces/ns/tables", json={"name": name, "schema": REST_SCHEMA}
                )
                view = http.post(
                    "/namespaces/ns/views",
                    json={"name": name, "schema": REST_SCHEMA, "view-version": VIEW_VERSION},
                )
                for answer in (table, view):
                    assert answer.status_code == 400, answer.text
                    assert answer.json()["error"]["type"] == "BadRequestException"
    finally:
        server.stop()
    assert _files(root) == []


def test_trinity_catalog_refuses_a_name_too_long_as_a_name(tmp_path):
    root = _lake(tmp_path)
    catalog = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    with pytest.raises(ValueError, match="more than the maximum"):
        catalog.create_table(("ns", LONG), SCHEMA)
    assert _files(root) == []


@pytest.mark.parametrize("name", [NFD, "x" * 150, "a b"])
def test_spark_plan_refuses_before_any_task(tmp_path, name):
    pytest.importorskip("pyspark")
    from pyspark.sql import types as T

    from tests.regression.spark_helpers import source

    root = _lake(tmp_path)
    schema = T.StructType([T.StructField("id", T.LongType())])
    with pytest.raises(ValueError, match="invalid table name"):
        source(root=root, path=f"ns.{name}").writer(schema, False)
