"""Issue 11 item 7: CLI messages used the API's words (`use cascade`, `recursive=True`,
`drop_export('big1')`, `max_age_millis`)."""

from __future__ import annotations

from regression_cli import run, sample

from trinityfs.cli.errors import cli_words

API_WORDS = ("cascade", "recursive=True", "drop_export(", "max_age_millis", "_millis")


def test_cli_errors_name_cli_commands_and_options(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    errors = [
        run(root, "rm", "/sales").err,  # a namespace without -r
        run(root, "rmdir", "/sales").err,  # not empty
        run(root, "expire", "--min-versions", "0").err,
    ]
    for err in errors:
        assert err.startswith("trinityfs: ") and err.count("\n") == 1, err
        assert not any(word in err for word in API_WORDS), err
    assert "rm -r" in errors[0] and "rm -r" in errors[1]
    assert "--min-versions" in errors[2]


def test_the_one_mapping_of_api_words():
    assert cli_words("drop them first or use cascade") == "remove them first, or use 'rm -r'"
    assert cli_words("an earlier one crashed: drop_export('big1') removes it") == (
        "an earlier one crashed: 'trinityfs drop-export big1' removes it"
    )
    assert cli_words("max_age_millis must be an int >= 0, got -1") == (
        "--max-age must be at least 0, got -1"
    )
