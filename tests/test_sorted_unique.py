"""``solvers.core.sorted_unique`` is ``np.unique`` of a 1-D array (it only avoids numpy's slow hashing path)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.core.sorted_unique import sorted_unique


@settings(max_examples=200, derandomize=True)
@given(st.lists(st.integers(-2 ** 62, 2 ** 62), max_size=60))
def test_sorted_unique_is_np_unique(values):
    a = np.array(values, dtype=np.int64)
    got = sorted_unique(a)
    assert got.dtype == a.dtype and np.array_equal(got, np.unique(a))
