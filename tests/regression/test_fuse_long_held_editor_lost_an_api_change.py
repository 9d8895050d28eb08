"""A file read through the mount, held for longer than `latest_ttl` while the table was
changed through the API, then written back by the same process: the write was based on
what the mount showed at the save, so the API's change was lost without an error (e7548e1
covered only a save within `latest_ttl`; docs/fuse.md said so). Now the mount remembers,
per process and path, which definition it served (trinityfs/fuse/served.py): a save by a
process that was shown an older definition fails with EBUSY and the newer one stays.
The mounts run with `latest_ttl=0`, so "held longer than latest_ttl" is any hold."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fuse_mount import FUSE, mounted, one_table

from trinityfs import Lakehouse

pytestmark = FUSE


def _format(root: str) -> str:
    return Lakehouse.open(root).describe_table("ns", "t").table_format


def _api_replace(root: str) -> None:
    Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})


def _held(body: str, path: Path) -> subprocess.Popen:
    """A Python process that reads `path`, says so on stdout, waits for a line on stdin,
    then runs `body` (with `path`, `seen` = the bytes read, and `os`)."""
    code = textwrap.dedent(
        """
        import os, sys
        path = sys.argv[1]
        with open(path, "rb") as f:
            seen = f.read()
        print("read", flush=True)
        sys.stdin.readline()
        """
    ) + textwrap.dedent(body)
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "read", proc.stderr.read()
    return proc


def _resume(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate("go\n", timeout=60)
    return proc.returncode, out, err


@pytest.fixture
def lake(tmp_path) -> str:
    return one_table(str(tmp_path / "lake"), {"table_format": "ICEBERG"})


def test_python_read_held_then_written_in_place_is_refused(lake, tmp_path):
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(
            """
            with open(path, "wb") as f:
                f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
            """,
            path,
        )
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code != 0 and "Device or resource busy" in err, err
        assert _format(lake) == "HUDI"
        assert json.loads(path.read_bytes())["definition"]["table_format"] == "HUDI"
        assert "was changed by another writer after this process read it" in mount.log_text()


def test_ed_held_then_written_is_refused(lake, tmp_path):
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        ed = subprocess.Popen(
            ["ed", str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert ed.stdout.readline().strip().isdigit()  # ed has read the file (its size)
        _api_replace(lake)
        _, err = ed.communicate(",s/ICEBERG/DELTA/\nw\nq\n", timeout=60)
        assert ed.returncode != 0 and "Device or resource busy" in err, err
        assert _format(lake) == "HUDI"


def test_temporary_file_renamed_over_is_refused(lake, tmp_path):
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(
            """
            import tempfile
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), delete=False) as f:
                f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
            os.replace(f.name, path)
            """,
            path,
        )
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code != 0 and "Device or resource busy" in err, err
        assert _format(lake) == "HUDI"


def test_backup_renamed_away_then_failed_save_puts_it_back(lake, tmp_path):
    """vim's save with backupcopy=no: `mv t t~`, write a new t, `rm t~`. The write fails,
    so the editor renames the backup back: t is the API's definition, listed once."""
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(
            """
            backup = path + "~"
            os.rename(path, backup)
            try:
                with open(path, "wb") as f:
                    f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
            except OSError as exc:
                os.rename(backup, path)
                raise SystemExit(f"busy: {exc.errno}")
            os.unlink(backup)
            """,
            path,
        )
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code != 0 and "busy: 16" in err, err
        assert _format(lake) == "HUDI"
        assert sorted(p.name for p in path.parent.iterdir()) == ["t"]
        assert json.loads(path.read_bytes())["definition"]["table_format"] == "HUDI"


def test_what_a_process_was_shown_or_wrote_itself_is_no_conflict(lake, tmp_path):
    """Guards: a process that read again after the change, or saves twice (its own
    commit is what it was shown), or never read the file (`cp` over it), writes."""
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(
            """
            with open(path, "rb") as f:
                seen = f.read()
            for fmt in (b'"DELTA"', b'"PAIMON"'):
                with open(path, "wb") as f:
                    f.write(seen.replace(b'"HUDI"', fmt))
            """,
            path,
        )
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code == 0, err
        assert _format(lake) == "PAIMON"
        source = tmp_path / "copy.json"
        source.write_bytes(path.read_bytes().replace(b'"PAIMON"', b'"ICEBERG"'))
        _api_replace(lake)
        subprocess.run(["cp", str(source), str(path)], check=True)
        assert _format(lake) == "ICEBERG"


def test_a_process_that_removed_or_moved_it_itself_writes_it_again(lake, tmp_path):
    """Guard: read t, remove it, write t anew (or move another table onto it, then
    write it) in one process: its own change is no change it did not see."""
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        code = textwrap.dedent(
            """
            import os, sys
            path = sys.argv[1]
            seen = open(path, "rb").read()
            os.remove(path)
            with open(path, "wb") as f:
                f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
            seen = open(path, "rb").read()
            other = os.path.join(os.path.dirname(path), "u")
            with open(other, "wb") as f:
                f.write(seen.replace(b'"DELTA"', b'"HUDI"'))
            os.rename(other, path)
            with open(path, "wb") as f:
                f.write(seen.replace(b'"DELTA"', b'"PAIMON"'))
            """
        )
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True)
        assert done.returncode == 0, done.stderr
        assert _format(lake) == "PAIMON"


@pytest.mark.parametrize(
    "body",
    [
        """
        with open(path, "r+b") as f:  # opened for reading and writing, nothing read
            f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
            f.truncate()
        """,
        """
        open(path, "rb").close()  # opened, nothing read
        with open(path, "wb") as f:
            f.write(seen.replace(b'"ICEBERG"', b'"DELTA"'))
        """,
    ],
    ids=["r+ without reading", "open without reading"],
)
def test_an_open_that_reads_nothing_shows_nothing(lake, tmp_path, body):
    """Review F5 of 7f63917: the record was taken at open, so an open that read nothing
    replaced what the process had read, and its stale write went through (rc 0)."""
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(body, path)
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code != 0 and "Device or resource busy" in err, err
        assert _format(lake) == "HUDI"


def test_r_plus_read_through_the_handle_then_written_commits(lake, tmp_path):
    """Guard: r+ that reads what it then rewrites has seen the API's change."""
    with mounted(lake, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        path = mount.path / "ns" / "t"
        proc = _held(
            """
            with open(path, "r+b") as f:
                now = f.read()
                f.seek(0)
                f.write(now.replace(b'"HUDI"', b'"DELTA"'))
                f.truncate()
            """,
            path,
        )
        _api_replace(lake)
        code, _, err = _resume(proc)
        assert code == 0, err
        assert _format(lake) == "DELTA"
