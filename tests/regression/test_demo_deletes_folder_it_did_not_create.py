"""Issue 11 item 1: `trinityfs-demo DIR` ran shutil.rmtree(DIR) on whatever was there."""

from __future__ import annotations

from trinityfs import demo


def test_demo_refuses_a_folder_holding_a_users_file(tmp_path, capsys):
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "thesis.txt").write_text("three years of work")
    assert demo.main([str(folder)]) == 1
    assert (folder / "thesis.txt").read_text() == "three years of work"
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.txt"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an earlier trinityfs-demo folder" in err


def test_demo_refuses_its_own_folder_once_a_user_file_was_added(tmp_path):
    folder = tmp_path / "lake"
    demo.claim_folder(folder)  # what a run does first: the folder is the demo's
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("mine")
    demo._record(folder)  # a run records everything it made
    (folder / "sub" / "later.txt").write_text("added after the demo")
    try:
        demo.claim_folder(folder)
    except demo.FolderNotOurs as exc:
        assert "sub/later.txt" in str(exc)
    else:
        raise AssertionError("claimed a folder holding a file the demo did not create")
    assert (folder / "sub" / "later.txt").exists() and (folder / "sub" / "notes.txt").exists()


def test_demo_empties_only_its_own_earlier_folder(tmp_path):
    folder = tmp_path / "lake"
    demo.claim_folder(folder)
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "node.arrow").write_bytes(b"x")
    demo._record(folder)
    demo.claim_folder(folder)  # an earlier demo's folder: emptied, marker included
    assert list(folder.iterdir()) == []


def test_demo_refuses_a_file_and_a_symlink(tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "x").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(target)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    for path in (link, plain):
        assert demo.main([str(path)]) == 1
    assert (target / "x").exists() and plain.read_text() == "x"
