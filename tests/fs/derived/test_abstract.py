"""fsspec's abstract test suite (fsspec.tests.abstract), wired as s3fs does it."""

from __future__ import annotations

import fsspec.tests.abstract as abstract
from trinity_fixtures import TrinityFixtures, TrinityNamespaceFixtures


class TestTrinityCopy(abstract.AbstractCopyTests, TrinityFixtures):
    pass


class TestTrinityGet(abstract.AbstractGetTests, TrinityFixtures):
    pass


class TestTrinityPut(abstract.AbstractPutTests, TrinityFixtures):
    pass


class TestTrinityPipe(abstract.AbstractPipeTests, TrinityNamespaceFixtures):
    pass


class TestTrinityOpen(abstract.AbstractOpenTests, TrinityNamespaceFixtures):
    pass
