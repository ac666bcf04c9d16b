"""Memory: pausing Python's cyclic garbage collector while large graphs and their tables are built.

micrograph's nodes and tables hold no reference cycles (a node refers only to its parents), so reference
counting frees them and the cyclic collector has nothing to do with them; left running, it walks the whole
live graph again and again while one is built, so the cost per node grows with the graph's size.

This module is the lowest layer of the engine: it imports nothing of micrograph.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a graph is built or an algorithm allocates its tables.

    micrograph's algorithms use it internally. A user building a very large graph may too:
    ``with micrograph.paused_gc(): z = build_a_million_nodes()`` keeps the building cost per node flat
    (see docs/performance.md). The collector's previous state is restored on exit, even on error; nested
    uses are fine.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
