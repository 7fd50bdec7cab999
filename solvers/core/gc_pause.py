"""``gc_paused()``: run a block with Python's cyclic garbage collector paused.

Exporting a 256-rank program builds and reads millions of small objects (instructions, XML elements); each
allocation burst makes the collector walk the whole young heap again and again, which measured 40% of a bundle's
time (bench/export_speed.py). The objects made there hold no reference cycles that must be freed mid-way, so the
collector waits until the block ends. Pausing is process-wide: a thread that pauses while another already has
leaves the collector to whichever paused first, which switches it back on.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """Pause the cyclic collector for the block (reference counting still frees memory as usual)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
