"""The column line writer (solvers/export/line_writer.py) writes what the % operator writes, line for line."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.export.line_writer import decimal_widths, write_lines
from solvers.export.msccl_xml import STEP_LINE

NAMES = ("s", "rrcs", "", "nop")
ints = st.integers(min_value=-(2 ** 40), max_value=2 ** 40)
rows = st.lists(st.tuples(ints, st.integers(0, len(NAMES) - 1), ints, st.integers(-1, 9)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_lines_are_those_of_the_percent_operator(data):
    template = '<a x="%d" k="%s">%d%d/>'
    cols = [np.array([r[i] for r in data], np.int64) for i in range(4)]
    blob, ends = write_lines(template, [cols[0], (cols[1], NAMES), cols[2], cols[3]])
    want = "".join(template % (a, NAMES[k], b, c) + "\n" for a, k, b, c in data)
    assert blob.decode("ascii") == want
    assert ends.tolist() == np.cumsum([len(template % (a, NAMES[k], b, c)) + 1 for a, k, b, c in data]).tolist()


def test_step_lines_and_widths():
    step = [np.array(v) for v in ([0, 12, 7], [0, 6, 3])] + [np.array(v) for v in ([1, 0, 2], [0, 150, -1])]
    kinds, bufs = ("s", "r", "rrc", "cpy", "rcs", "rrcs", "nop"), ("i", "o", "s")
    cols = [step[0], (step[1], kinds), (step[2], bufs), step[3], (step[2], bufs), step[3], step[0], step[3],
            step[3], step[2]]
    blob, _ = write_lines(STEP_LINE, cols)
    want = "".join(STEP_LINE % (s, kinds[k], bufs[b], o, bufs[b], o, s, o, o, b) + "\n"
                   for s, k, b, o in zip(*(c.tolist() for c in step)))
    assert blob.decode() == want
    assert decimal_widths(np.array([0, 9, 10, -1, -10, 10 ** 18])).tolist() == [1, 1, 2, 2, 3, 19]
    blob, ends = write_lines("%d", [np.zeros(0, np.int64)])
    assert blob == b"" and len(ends) == 0
    with pytest.raises(ValueError, match="fields"):
        write_lines("%d %d", [np.zeros(2, np.int64)])
