"""Writing files: JSON creates or replaces, same bytes change nothing, bad bytes fail
with a ValueError naming the problem and nothing committed; each write is one commit."""

from __future__ import annotations

import errno
import json

import pytest

TABLE = b'{"kind": "table", "definition": {"table_format": "ICEBERG"}}'
VIEW = b'{"kind": "view", "definition": {"properties": {"sql": "select 1"}}}'


def test_write_creates_and_replaces(sample, lake):
    fs = sample
    fs.pipe("/staging/t", TABLE)
    assert lake.latest_version() == 5
    assert lake.describe_table("staging", "t").table_format == "ICEBERG"
    fs.pipe("/staging/t", b'{"kind": "table", "definition": {"table_format": "DELTA"}}')
    assert lake.latest_version() == 6
    assert lake.describe_table("staging", "t").table_format == "DELTA"
    with fs.open("/staging/v", "wb") as f:
        f.write(VIEW)
    assert lake.describe_view("staging", "v").properties["sql"] == "select 1"
    assert f.version == 7


def test_replace_keeps_the_id(sample, lake):
    old_id = lake.describe_table("sales", "orders").id
    sample.pipe("/sales/orders", b'{"kind": "table", "definition": {"table_type": "EXTERNAL"}}')
    assert lake.describe_table("sales", "orders").id == old_id


def test_writing_back_what_was_read_changes_nothing(sample, lake):
    fs = sample
    version = lake.latest_version()
    for path in ("/sales/orders", "/sales/big_orders"):
        data = fs.cat(path)
        fs.pipe(path, data)
        with fs.open(path, "wb") as f:
            f.write(data)
        # the same definition written differently (no indentation) is no change either
        fs.pipe(path, json.dumps(json.loads(data)).encode())
    assert lake.latest_version() == version


def test_empty_write_creates_an_empty_definition(sample, lake):
    fs = sample
    fs.touch("/staging/empty")
    assert fs.info("/staging/empty")["kind"] == "table"
    assert json.loads(fs.cat("/staging/empty"))["definition"]["table_format"] == ""
    fs.pipe("/staging/blank", b"  \n")  # whitespace only counts as empty
    assert fs.isfile("/staging/blank")
    version = lake.latest_version()
    fs.touch("/staging/empty", truncate=False)  # exists: left alone
    assert lake.latest_version() == version
    fs.touch("/sales/big_orders")  # an empty write keeps the kind
    assert fs.info("/sales/big_orders")["kind"] == "view"
    assert lake.describe_view("sales", "big_orders").properties == {}


def test_writing_another_kind_replaces_the_object(sample, lake):
    sample.pipe("/sales/orders", VIEW)
    assert sample.info("/sales/orders")["kind"] == "view"
    assert lake.list_tables("sales") == []


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"data", "not valid JSON"),
        (b"[1, 2]", "must be an object"),
        (b"0", "not a number"),
        (b'{"definition": {}}', 'missing "kind"'),
        (b'{"kind": "table", "extra": 1}', "unknown key"),
        (b'{"kind": "namespace"}', "namespaces are directories"),
        (b'{"kind": "index"}', '"kind" must be "table" or "view"'),
        (b'{"kind": "table", "definition": []}', '"definition" must be a JSON object'),
        (b'{"kind": "table", "definition": {"nope": 1}}', "nope"),
        (b'{"kind": "table", "definition": {"schema": 5}}', "schema"),
    ],
)
def test_bad_content_is_a_value_error_and_commits_nothing(sample, lake, data, problem):
    version = lake.latest_version()
    before = sample.cat("/sales/orders")
    with pytest.raises(ValueError, match=problem) as info:
        sample.pipe("/sales/orders", data)
    assert "/sales/orders" in str(info.value)
    assert info.value.errno == errno.EINVAL
    with pytest.raises(ValueError, match=problem), sample.open("/sales/new", "wb") as f:
        f.write(data)
    assert lake.latest_version() == version
    assert sample.cat("/sales/orders") == before
    assert not sample.exists("/sales/new")


def test_exclusive_create(sample, lake):
    # fsspec's abstract open/pipe exclusive tests, with definitions for content
    fs = sample
    with fs.open("/staging/t", "wb") as f:
        f.write(TABLE)
    assert fs.cat("/staging/t") == fs.cat("/staging/t")
    with pytest.raises(FileExistsError):
        fs.open("/staging/t", "xb")
    with fs.open("/staging/x", "xb") as f:
        f.write(TABLE)
    fs.pipe_file("/staging/p", TABLE)
    with pytest.raises(FileExistsError):
        fs.pipe_file("/staging/p", TABLE, mode="create")
    with pytest.raises(FileExistsError):
        fs.pipe_file("/sales/big_orders", TABLE, mode="create")  # a view by that name
    fs.pipe_file("/staging/p", VIEW, mode="overwrite")
    assert fs.info("/staging/p")["kind"] == "view"


def test_where_files_cannot_be_written(sample, lake):
    fs = sample
    version = lake.latest_version()
    with pytest.raises(IsADirectoryError):
        fs.pipe("/sales", TABLE)
    with pytest.raises(IsADirectoryError):
        fs.pipe("/", TABLE)
    with pytest.raises(PermissionError) as info:
        fs.pipe("/not_a_namespace", TABLE)  # files live inside namespaces
    assert info.value.errno == errno.EPERM
    with pytest.raises(PermissionError) as info:
        fs.pipe("/sales/orders/deeper", TABLE)
    assert info.value.errno == errno.EPERM
    with pytest.raises(FileNotFoundError, match="namespace 'nope'"):
        fs.pipe("/nope/t", TABLE)
    with pytest.raises(ValueError) as info:
        fs.pipe("/sales/bad name", TABLE)
    assert info.value.errno == errno.EINVAL
    with pytest.raises(ValueError, match="more than the maximum of 100 bytes"):
        fs.pipe("/sales/" + "x" * 200, TABLE)
    assert lake.latest_version() == version


def test_an_exception_in_the_with_block_writes_nothing(sample, lake):
    version = lake.latest_version()
    with pytest.raises(RuntimeError), sample.open("/staging/t", "wb") as f:
        f.write(TABLE)
        raise RuntimeError("boom")
    assert lake.latest_version() == version
    assert not sample.exists("/staging/t")


def test_pipe_many_is_one_commit(sample, lake):
    sample.pipe({"/staging/a": TABLE, "/staging/b": VIEW, "/sales/c": b""})
    assert lake.latest_version() == 5
    assert sample.ls("/staging", detail=False) == ["/staging/a", "/staging/b"]


def test_put_local_files_is_one_commit(sample, lake, tmp_path):
    (tmp_path / "a").write_bytes(TABLE)
    (tmp_path / "b").write_bytes(b"")
    sample.put([str(tmp_path / "a"), str(tmp_path / "b")], "/staging/")
    assert lake.latest_version() == 5
    assert sample.ls("/staging", detail=False) == ["/staging/a", "/staging/b"]


def test_text_mode(sample, lake):
    with sample.open("/staging/t", "w", encoding="utf-8") as f:
        f.write(TABLE.decode())
    assert sample.info("/staging/t")["kind"] == "table"
    version = lake.latest_version()
    with pytest.raises(RuntimeError), sample.open("/staging/u", "w") as f:
        f.write(TABLE.decode())
        raise RuntimeError("boom")
    assert not sample.exists("/staging/u") and lake.latest_version() == version
