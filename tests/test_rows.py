"""take_rows / put_rows (solvers/core/rows.py) do what fancy indexing of 2-D arrays does."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.core.rows import put_rows, take_rows


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.integers(0, 4), st.lists(st.integers(0, 5), max_size=12),
       st.sampled_from([np.float64, np.uint64, np.int64]))
def test_rows_as_fancy_indexing(nrows, width, picks, dtype):
    rng = np.random.default_rng(len(picks) * 7 + width)
    a = (rng.random((nrows, width)) * 1000).astype(dtype)
    idx = np.array([p % nrows for p in picks], np.int64)
    assert np.array_equal(take_rows(a, idx), a[idx])
    values = (rng.random((len(idx), width)) * 1000).astype(dtype)
    b, c = a.copy(), a.copy()
    b[idx] = values
    put_rows(c, idx, values)
    assert np.array_equal(b, c)
