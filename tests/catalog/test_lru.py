"""trinityfs.lru.LRU: the one LRU (count- or weight-bounded, thread-safe)."""

from __future__ import annotations

import threading

import pytest

from trinityfs.lru import LRU


def test_evicts_the_least_recently_used():
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # refreshes a
    lru.put("c", 3)
    assert lru.keys() == ["a", "c"] and "b" not in lru and len(lru) == 2


def test_weight_bound_and_oversized_values():
    lru: LRU[str, bytes] = LRU(10, weigh=len)
    lru.put("a", b"12345")
    lru.put("b", b"1234")
    lru.put("c", b"12")  # 11 > 10: a goes
    assert lru.keys() == ["b", "c"] and lru.weight == 6
    lru.put("huge", b"x" * 11)  # never kept
    assert "huge" not in lru and lru.weight == 6
    lru.put("b", b"1")  # replacing re-weighs
    assert lru.weight == 3


def test_get_or_load_pop_discard_clear():
    lru: LRU[int, int] = LRU(8)
    loads = []
    assert lru.get_or_load(1, lambda: loads.append(1) or 10) == 10
    assert lru.get_or_load(1, lambda: loads.append(1) or 11) == 10
    assert loads == [1]
    lru.put(2, 20)
    lru.put(3, None)  # a cached None is a hit for get_or_load
    assert lru.get_or_load(3, lambda: 99) is None
    assert lru.pop(2) == 20 and lru.pop(2, -1) == -1
    assert lru.discard_if(lambda k: k == 1) == 1 and list(lru) == [3]
    lru.clear()
    assert len(lru) == 0 and lru.weight == 0
    with pytest.raises(ValueError):
        LRU(-1)


def test_threads_never_exceed_the_bound():
    lru: LRU[int, int] = LRU(50)

    def work(base: int) -> None:
        for i in range(2000):
            lru.put(base + i % 200, i)
            lru.get(base + (i * 7) % 200)

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) == 50 and lru.weight == 50
