"""The column checker of MSCCL files (``solvers.export.flat`` and ``flat_check``, issue 22's speed): it reads
exactly what the line reader reads, its verdicts are the object checker's (``validate`` and ``simulate``), and
``check_xml`` reports the same either way. Mutated programs compare the two; where their simulations disagree the
program must have a race (two accesses of a chunk, one a write, that no wait orders), whose outcome depends on
the order each picks."""
from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solvers import synthesize
from solvers.export import check_xml, lower, parse_xml, simulate, to_xml, validate
from solvers.export import check as check_module
from solvers.export import flat_check
from solvers.export.check import validate_header
from solvers.export.flat import read_flat
from solvers.export.flat_check import runs, sound
from solvers.export.program import READING_STEPS, RECEIVING_STEPS, SENDING_STEPS, STEP_TYPES, TARGETS, WRITING_STEPS
from topologies import load

# the programs of the fixture below, by index, and the runtime each is lowered for and checked against: full ops
# (rcs, rrc, rrcs) for msccl-executor, receives into scratch and local reductions for RCCL, whose kernels lack them
RUNTIME_OF = ["msccl-executor"] * 6 + ["rccl"] * 4


def _program(expr, algo, coll, **kwargs):
    topo = load(expr)
    return lower(topo, synthesize(topo, algo, coll).schedule, **kwargs)


@pytest.fixture(scope="module")
def programs():
    from solvers.directconnect.direct_alltoall import direct_alltoall
    cube = load("hypercube(2)")
    return [_program("hypercube(2)", "ring", "allgather"),
            _program("hypercube(3)", "bfb", "allreduce", ops_per_tb=3, merge=True),
            _program("hypercube(2)", "ring", "allgather", in_place=False, copies=2),
            _program("gkautz(2,4)", "bfb", "reduce_scatter", in_place=False, merge=True, ops_per_tb=4),
            _program("hypercube(2)", "ring", "allreduce", in_place=False),
            lower(cube, direct_alltoall(cube)),
            _program("hypercube(3)", "bfb", "allreduce", ops_per_tb=3, merge=True, full_ops=False),
            _program("gkautz(2,4)", "bfb", "reduce_scatter", in_place=False, merge=True, ops_per_tb=4,
                     full_ops=False),
            _program("hypercube(2)", "ring", "allreduce", in_place=False, full_ops=False),
            _program("circulant(8,[1,2])", "bfb", "reduce_scatter", full_ops=False)]


def _fast(text, runtime="rccl"):
    got = read_flat(text, None)
    if got is None:
        return None
    flat, dialect = got
    valid = not validate_header(flat.header, dialect) and sound(flat, 108, TARGETS[runtime])
    return flat, valid, (runs(flat) if valid else None)


def test_columns_read_what_the_line_reader_reads(programs):
    for algo in programs:
        for dialect in ("executor", "msccl"):
            text = to_xml(algo, dialect)
            flat, got_dialect = read_flat(text, None)
            assert got_dialect == dialect
            assert flat.to_algo() == parse_xml(text)[0]


@pytest.mark.parametrize("change", [
    lambda t: "<!-- a comment -->\n" + t, lambda t: t.replace("\n", "\r\n"),
    lambda t: t.replace(' type="s" ', ' type="send" ', 1), lambda t: t.replace(' srcbuf="o" ', ' srcbuf="x" ', 1),
    lambda t: t.replace(' cnt="1" ', ' cnt="1234567890123456789012" ', 1),
    lambda t: t.replace("    </tb>\n", "", 1), lambda t: t.replace("  </gpu>\n", "", 1),
    lambda t: t.replace('"/>\n', '" />\n', 1), lambda t: t.replace("    <tb ", "     <tb ", 1),
    lambda t: t.replace("      <step", "  <gpu", 1),
    lambda t: t.replace(' i_chunks="', ' i_chunks="1234567890123456789012', 1),
    lambda t: t.replace(' depid="-1" ', ' depid="1-1" ', 1), lambda t: t.replace(' cnt="1" ', ' cnt="" ', 1),
    lambda t: t.replace(' cnt="1" ', ' cnt="1²" ', 1)])
def test_any_other_form_is_left_to_the_object_reader(programs, change):
    text = change(to_xml(programs[2]))
    assert text != to_xml(programs[2])
    assert read_flat(text, None) is None
    report = check_xml(text)
    try:
        algo, dialect = parse_xml(text)
    except ValueError as exc:
        assert not report.ok and report.first == str(exc)
        return
    want = validate(algo, dialect) or simulate(algo)
    assert report.problems == want and report.flat is None


def test_a_passing_file_reports_the_same_counts_either_way(programs, monkeypatch):
    texts = [to_xml(a) for a in programs]
    fast = [check_xml(t, runtime=r) for t, r in zip(texts, RUNTIME_OF)]
    monkeypatch.setattr(check_module, "read_flat", lambda text, dialect: None)
    slow = [check_xml(t, runtime=r) for t, r in zip(texts, RUNTIME_OF)]
    for f, s in zip(fast, slow):
        assert f.ok and s.ok and f.flat is not None and s.flat is None
        assert (f.ranks, f.threadblocks, f.steps, f.tbs_per_rank, f.steps_per_tb) == \
            (s.ranks, s.threadblocks, s.steps, s.tbs_per_rank, s.steps_per_tb)
        assert f.full_program() == s.program


def test_many_waves_defer_to_the_event_driven_simulation(programs, monkeypatch):
    text = to_xml(programs[1])
    flat, _ = read_flat(text, None)
    assert runs(flat) is True
    monkeypatch.setattr(flat_check, "FEW_WAVES", 0)
    monkeypatch.setattr(flat_check, "MIN_STEPS_PER_WAVE", 10 ** 9)
    assert runs(flat) is None
    report = check_xml(text, runtime=RUNTIME_OF[1])
    assert report.ok and report.flat is None            # checked on objects instead


def _racy(algo) -> bool:
    """Whether two accesses of one chunk of a rank, at least one a write, are ordered by no chain of waits (the
    step before on the threadblock, the dependency, the matching send). False for a program that deadlocks."""
    ids, preds = {}, []
    for g in algo.gpus:
        for t in g.tbs:
            for k, s in enumerate(t.steps):
                ids[(g.id, t.id, k)] = len(preds)
                preds.append([ids[(g.id, t.id, k - 1)]] if k else [])
    sends, recvs = {}, {}
    for g in algo.gpus:
        by_id = {t.id: t for t in g.tbs}
        for t in g.tbs:
            for k, s in enumerate(t.steps):
                v = ids[(g.id, t.id, k)]
                if s.depid >= 0:
                    preds[v].append(ids[(g.id, s.depid, s.deps)])
                if s.type in SENDING_STEPS:
                    sends.setdefault((g.id, t.send, t.chan), []).append(v)
                if s.type in RECEIVING_STEPS:
                    recvs.setdefault((t.recv, g.id, t.chan), []).append(v)
            assert by_id
    for key, rs in recvs.items():
        if len(sends.get(key, [])) != len(rs):
            return False
        for s_, r_ in zip(sends[key], rs):
            preds[r_].append(s_)
    before = [None] * len(preds)          # every step's ancestors as a bit set
    pending = list(range(len(preds)))
    while pending:
        left = [v for v in pending if any(before[p] is None for p in preds[v])]
        if len(left) == len(pending):
            return False                  # a cycle: a deadlock, which both simulations report
        for v in pending:
            if v not in left:
                before[v] = 0
                for p in preds[v]:
                    before[v] |= before[p] | (1 << p)
        pending = left
    touches = {}
    for g in algo.gpus:
        for t in g.tbs:
            for k, s in enumerate(t.steps):
                v = ids[(g.id, t.id, k)]
                for used, buf, off, writes in ((s.type in READING_STEPS or s.type == "re", s.srcbuf, s.srcoff, False),
                                               (s.type == "re", s.dstbuf, s.dstoff, False),
                                               (s.type in WRITING_STEPS, s.dstbuf, s.dstoff, True)):
                    if used:
                        for c in range(off, off + s.cnt):
                            touches.setdefault((g.id, buf, c), []).append((v, writes))
    for got in touches.values():
        for i, (u, wu) in enumerate(got):
            for v, wv in got[i + 1:]:
                if (wu or wv) and u != v and not (before[v] >> u & 1 or before[u] >> v & 1):
                    return True
    return False


_FIELDS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")


@st.composite
def _mutations(draw):
    return [(draw(st.sampled_from(("step", "step", "step", "drop", "swap", "tb", "gpu", "header"))),
             draw(st.integers(0, 10 ** 6)), draw(st.integers(0, 10 ** 6)), draw(st.integers(-2, 9)))
            for _ in range(draw(st.integers(1, 3)))]


def _mutate(algo, mutations):
    algo = copy.deepcopy(algo)
    tbs = [(g, t) for g in algo.gpus for t in g.tbs]
    for what, a, b, value in mutations:
        g, t = tbs[a % len(tbs)]
        if what in ("step", "drop", "swap") and t.steps:
            k = b % len(t.steps)
            if what == "step":
                name = _FIELDS[a // len(tbs) % len(_FIELDS)]
                if name == "type":
                    value = STEP_TYPES[value % len(STEP_TYPES)]
                elif name in ("srcbuf", "dstbuf"):
                    value = "ios"[value % 3]
                setattr(t.steps[k], name, value)
            else:
                if what == "drop":
                    del t.steps[k]
                elif k + 1 < len(t.steps):
                    t.steps[k], t.steps[k + 1] = t.steps[k + 1], t.steps[k]
                if a % 2:
                    for i, s in enumerate(t.steps):
                        s.s = i
        elif what == "tb":
            setattr(t, ("id", "send", "recv", "chan")[b % 4], value)
        elif what == "gpu":
            setattr(g, ("id", "i_chunks", "o_chunks", "s_chunks")[b % 4], max(value, -1) * (1 + b % 5))
        elif what == "header":
            name = ("coll", "inplace", "outofplace", "nchunksperloop")[b % 4]
            setattr(algo, name, ("allgather", "allreduce", "reducescatter", "alltoall")[value % 4]
                    if name == "coll" else value % 2 if name in ("inplace", "outofplace") else max(value, 1))
    return algo


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(RUNTIME_OF) - 1), mutations=_mutations())
def test_column_verdicts_are_the_object_checkers(programs, which, mutations):
    text = to_xml(_mutate(programs[which], mutations))
    runtime = RUNTIME_OF[which]
    algo, dialect = parse_xml(text)
    want_valid = not validate(algo, dialect, 108, runtime)
    got = _fast(text, runtime)
    assert got is not None
    flat, valid, simulated = got
    assert valid == want_valid
    if not valid:
        assert check_xml(text, runtime=runtime).problems == validate(algo, dialect, 108, runtime)
    if valid and simulated is not None:
        want_run = not simulate(algo)
        assert simulated == want_run or _racy(algo)
        report = check_xml(text, runtime=runtime)
        assert report.ok == want_run or _racy(algo)
        if not report.ok:
            assert report.problems == simulate(algo)         # the message is the object checker's


def test_unmutated_programs_pass_in_columns(programs):
    for algo, runtime in zip(programs, RUNTIME_OF, strict=True):
        flat, valid, simulated = _fast(to_xml(algo), runtime)
        assert valid and simulated is True
        assert not _racy(algo)
        types = {s.type for g in algo.gpus for t in g.tbs for s in t.steps}
        assert types <= TARGETS[runtime].kernel_steps
        if runtime == "rccl" and algo.coll != "allgather":
            assert "re" in types            # the reductions are local steps of their own


def test_sizes_the_runtime_cannot_read_or_we_cannot_simulate_get_one_line(programs):
    """Integers above the readers' C int, and buffers too large to simulate, are refused with a message (no
    crash, no list of billions of chunks), whichever reader takes the file."""
    text = to_xml(programs[2])
    huge_header = text.replace(' nchunksperloop="', ' nchunksperloop="99999999999', 1)
    report = check_xml(huge_header)
    assert not report.ok and "the runtime's int holds" in report.first
    large = text.replace(' s_chunks="0"', ' s_chunks="20000000"', 1)
    assert large != text
    report = check_xml(large)
    assert not report.ok and "this checker simulates" in report.first
    algo = parse_xml(large)[0]
    assert validate(algo) == [] and "this checker simulates" in simulate(algo)[0]
