"""Fixtures that run fsspec's abstract test suite against the trinity:// filesystem."""

from __future__ import annotations

import posixpath
import uuid

import pytest
from fsspec.tests.abstract import AbstractFixtures

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem


class TrinityFixtures(AbstractFixtures):
    """A fresh lakehouse per test; the scenarios are created at the catalog root.

    Top-level directories of the scenarios become namespaces and their files tables.
    """

    @pytest.fixture
    def fs(self):
        root = f"memory://abstract-{uuid.uuid4().hex}"
        Lakehouse.create(root)
        return TrinityFileSystem(root=root, skip_instance_cache=True)

    @pytest.fixture
    def fs_join(self):
        return posixpath.join

    @pytest.fixture
    def fs_path(self):
        return "/"

    @pytest.fixture
    def supports_empty_directories(self):
        return True


class TrinityNamespaceFixtures(TrinityFixtures):
    """For the open/pipe tests: `fs_target` is a file, so it must sit in a namespace."""

    @pytest.fixture
    def fs_path(self, fs):
        fs.mkdir("/ns")
        return "/ns"
