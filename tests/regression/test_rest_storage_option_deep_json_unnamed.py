"""`python -m trinityfs.rest --storage-option KEY=<deep JSON>` parsed the value with its
own copy of the CLI's rule and failed with a bare "RecursionError: maximum recursion
depth exceeded" naming nothing. The CLI, the mount and the server now share
`trinityfs.catalog.config.storage_option_value`, which names the option."""

from __future__ import annotations

from trinityfs.rest.server import main


def test_deep_json_storage_option_names_the_option(tmp_path, capsys):
    deep = "[" * 50_000 + "]" * 50_000
    status = main(["--root", str(tmp_path / "lake"), "--storage-option", f"endpoint={deep}"])
    err = capsys.readouterr().err
    assert status == 1
    assert "storage option endpoint" in err and "nested too deeply" in err
    assert len(err.strip().splitlines()) == 1


def test_plain_and_json_values_still_parse(tmp_path):
    from trinityfs.catalog.config import storage_options_from_pairs

    got = storage_options_from_pairs([("a", "1"), ("b", "text"), ("c", '{"k": true}')])
    assert got == {"a": 1, "b": "text", "c": {"k": True}}
