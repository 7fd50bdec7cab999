"""The symbolic run of a plan that passed the structural rules of ``reader.py`` and ``op_rules.py``
(``_simulate``, the second half of ``check_plan``), two launches back to back.

Then a symbolic run (as ``check.simulate`` does for MSCCL), twice in a row as repeated calls run it: a chunk is
(input chunk index, mask of contributing ranks, counted twice) and reduces with ``check._plus``;
``signal``/``wait`` pair per channel in order (the k-th wait takes the k-th signal of the paired channel, [E]),
semaphores count, barriers gather ``num_threadblocks``. Happens-before is tracked with vector clocks (a rank's
second launch starts after all of its first), so a read of data whose write is not ordered before it by a
signal/wait, semaphore or barrier (a missing ``wait``, say), or an overwrite of data not yet read, is reported as
a race however the run is scheduled; the scratch buffers, channel counters and semaphores carry over into the
second launch, the input and output buffers are filled afresh. A run that stops with threadblocks left is a
deadlock; signals never waited for and semaphores not back at their initial value are reported (both persist
into the next launch); an out-of-place plan must not write its input; after each launch the buffers must hold the
collective (``check._postcondition``). Packet ops, ``glres``, ``pipeline``, ``pwsf``, ``tbg_info`` and NVLS
buffers are accepted by the structure check but not simulated (the report says so and is not ok). Port-channel
copies are simulated as if done when issued. Not checked: message sizes against ``buffer_alignment`` and the
chunk counts (known only at call time), and anything about the GPUs' memory model beyond the ordering above.
"""
from __future__ import annotations

from collections import defaultdict, deque

from ..check import _plus, _postcondition
from ..program import Algo
from .format import BUFFER_TYPES, _SIGNALS, _WAITS, _natural_chunks
from .model import _Model, _Op


def _simulate(model: _Model) -> list[str]:
    """The symbolic run (module docstring), two launches back to back; the faults found."""
    for ops in (o for tbs in model.tbs for o in tbs):
        for m in ops:
            if m.unsupported:
                return [f"{m.where}: {m.unsupported} is not simulated by this checker, so the plan is unverified"]
    coll = model.coll
    if coll not in ("allgather", "reducescatter", "allreduce", "alltoall"):
        return [f'collective "{coll}" has no postcondition here (allgather, reducescatter, allreduce, alltoall)']
    n = model.n
    if any((model.chunks[r]["i"], model.chunks[r]["o"]) != (model.chunks[0]["i"], model.chunks[0]["o"])
           for r in range(n)):
        return ["the gpus list different input or output chunk counts; a collective's ranks have equal buffers"]
    nchunks = model.chunks[0]["o"] if coll == "allgather" else model.chunks[0]["i"]
    per = nchunks // n
    want = _natural_chunks(coll, n, per)
    if per < 1 or per * n != nchunks or (model.chunks[0]["i"], model.chunks[0]["o"]) != want:
        return [f"input_chunks={model.chunks[0]['i']} and output_chunks={model.chunks[0]['o']} do not fit a {coll} "
                f"over {n} ranks (expected {want[0]} and {want[1]} for {per} chunk(s) per shard)"]
    run = _Run(model, per)
    for launch in (0, 1):
        err = run.launch(launch)
        if err:
            return [err if launch == 0 else f"second launch: {err}"]
    return []


class _Run:
    """The state a plan's launches share (as the executor keeps it between calls): the scratch buffers, the
    channel and device semaphores, and who last wrote or read each chunk (for the race checks). A chunk access
    is (rank, buffer, index); an agent is one threadblock of one launch, with a vector clock over all agents."""

    def __init__(self, model: _Model, per: int):
        self.model, self.per = model, per
        self.agents = [(r, t) for r in range(model.n) for t in range(len(model.tbs[r]))]
        self.T = len(self.agents)
        self.bufs = {(r, b): [None] * model.chunks[r][b] for r in range(model.n) for b in BUFFER_TYPES}
        self.writer = {}                          # chunk -> (agent, time, where)
        self.readers = defaultdict(dict)          # chunk -> {agent: (time, where)}
        self.signals = defaultdict(deque)         # (from, to, type, ordinal) -> clocks (None: relaxed)
        self.sems = {(r, s): deque([None] * v) for r in range(model.n) for s, v in enumerate(model.sem_init[r])}
        self.clock = [[0] * (2 * self.T) for _ in range(2 * self.T)]
        self.ordinal = {}                         # (rank, type, channel) -> (peer, k-th channel to that peer)
        for r in range(model.n):
            for ctype, peers in model.chans[r].items():
                seen = defaultdict(int)
                for g, p in enumerate(peers):
                    self.ordinal[(r, ctype, g)] = (p, seen[p])
                    seen[p] += 1

    def launch(self, launch: int) -> str:
        model, per, n = self.model, self.per, self.model.n
        in_place = model.in_place
        # the caller's buffers hold fresh data; a rank's launch starts after its previous one ended
        for r in range(n):
            for b in ("i", "o"):
                cells = self.bufs[(r, b)]
                for k in range(len(cells)):
                    cells[k] = None
                    self.writer.pop((r, b, k), None)
                    self.readers.pop((r, b, k), None)
            if model.coll == "allgather" and in_place:
                for k in range(per):
                    self.bufs[(r, "o")][r * per + k] = (k, 1 << r, False)
            else:
                cells = self.bufs[(r, "i")]
                for k in range(len(cells)):
                    cells[k] = (k, 1 << r, False)
        base = launch * self.T
        if launch:
            for r in range(n):
                ended = [max(c) for c in zip(*(self.clock[i] for i, (rr, _) in enumerate(self.agents) if rr == r))] \
                    if any(rr == r for rr, _ in self.agents) else [0] * (2 * self.T)
                for i, (rr, _) in enumerate(self.agents):
                    if rr == r:
                        self.clock[base + i][:] = ended
        self.pc = [0] * self.T
        self.barriers, self.released = defaultdict(list), set()
        progress = True
        while progress:
            progress = False
            for i, (r, t) in enumerate(self.agents):
                ops = model.tbs[r][t]
                while self.pc[i] < len(ops):
                    done, err = self.step(base + i, r, ops[self.pc[i]])
                    if err:
                        return err
                    if not done:
                        break
                    self.pc[i] += 1
                    progress = True
        stuck = [i for i, (r, t) in enumerate(self.agents) if self.pc[i] < len(model.tbs[r][t])]
        if stuck:
            r, t = self.agents[stuck[0]]
            m = model.tbs[r][t][self.pc[stuck[0]]]
            if m.name in _WAITS:
                keys = [self._wait_key(r, m, g) for g in m.chans]
                p, _, _, o = next((k for k in keys if not self.signals[k]), keys[0])
                why = f"waits for a signal from gpu {p} on their {m.ctype} channel pair #{o} that never comes"
            elif m.name == "sem_acquire":
                why = f"waits on semaphore(s) {m.sems} that are never released"
            else:
                why = f"waits at barrier {m.barrier[0]} for {m.barrier[1]} threadblocks"
            return f"deadlock: {len(stuck)} threadblock(s) never finish; {m.where} {why}"
        for (src, dst, ctype, o), q in sorted(self.signals.items()):
            if q:
                return (f"gpu {src} signals gpu {dst} {len(q)} more time(s) than gpu {dst} waits on their {ctype} "
                        f"channel pair #{o} (every signal needs its wait: counters carry over into the next launch)")
        for (r, s), q in sorted(self.sems.items()):
            if len(q) != model.sem_init[r][s]:
                return (f"gpu {r} semaphore {s} ends at {len(q)}, not its initial {model.sem_init[r][s]} (the next "
                        "launch would start unbalanced)")
        stub = Algo("plan", "Simple", 0, per * n, n, model.coll, int(in_place), int(not in_place))
        return next(iter(_postcondition(stub, self.bufs, per, in_place)), "")

    def _wait_key(self, r, m, g):
        p, o = self.ordinal[(r, m.ctype, g)]
        return (p, r, m.ctype, o)

    def _race(self, m, cell, kind, other) -> str:
        return (f"race: {m.where} {kind} gpu {cell[0]} buffer {cell[1]} chunk {cell[2]}, which {other[2]} also "
                "touches with nothing (signal/wait, semaphore, barrier) ordering the two")

    def _read(self, a, m, ref):
        vals, mine = [], self.clock[a]
        for k in range(ref.size):
            cell = (ref.rank, ref.buf, ref.index + k)
            w = self.writer.get(cell)
            if w is not None and w[0] != a and mine[w[0]] < w[1]:
                return None, self._race(m, cell, "reads", w)
            self.readers[cell][a] = (mine[a], m.where)
            vals.append(self.bufs[(ref.rank, ref.buf)][ref.index + k])
        return vals, ""

    def _write(self, a, m, ref, vals) -> str:
        if not self.model.in_place and ref.buf == "i":
            return f"{m.where}: writes the input buffer of gpu {ref.rank} in an out-of-place plan"
        mine = self.clock[a]
        for k in range(ref.size):
            cell = (ref.rank, ref.buf, ref.index + k)
            w = self.writer.get(cell)
            if w is not None and w[0] != a and mine[w[0]] < w[1]:
                return self._race(m, cell, "overwrites", w)
            for b, (t, where) in self.readers[cell].items():
                if b != a and mine[b] < t:
                    return self._race(m, cell, "overwrites", (b, t, where))
            self.readers[cell] = {}
            self.writer[cell] = (a, mine[a], m.where)
            self.bufs[(ref.rank, ref.buf)][ref.index + k] = vals[k]
        return ""

    def _join(self, a, other):
        if other is not None:
            mine = self.clock[a]
            mine[:] = map(max, mine, other)

    def _copy(self, a, m) -> str:
        for s, d in zip(m.srcs, m.dsts):
            vals, err = self._read(a, m, s)
            if err or (err := self._write(a, m, d, vals)):
                return err
        return ""

    def step(self, a, r, m: _Op) -> tuple[bool, str]:
        """Run op ``m`` for agent ``a`` (on rank ``r``): (done, fault); not done while it has to wait."""
        name = m.name
        if name in _WAITS:
            keys = [self._wait_key(r, m, g) for g in m.chans]
            if any(len(self.signals[k]) < keys.count(k) for k in keys):
                return False, ""
            for k in keys:
                got = self.signals[k].popleft()
                if name == "wait":                # a relaxed wait orders no data
                    self._join(a, got)
        elif name == "sem_acquire":
            if any(len(self.sems[(r, s)]) < m.sems.count(s) for s in m.sems):
                return False, ""
            for s in m.sems:
                self._join(a, self.sems[(r, s)].popleft())
        elif name == "barrier":
            key = (r,) + m.barrier
            if a in self.released:
                self.released.discard(a)
            else:
                group = self.barriers[key]
                if a not in group:
                    group.append(a)
                if len(group) < m.barrier[1]:
                    return False, ""
                self.barriers[key] = []
                merged = [max(c) for c in zip(*(self.clock[b] for b in group))]
                for b in group:
                    self.clock[b][:] = merged
                    if b != a:
                        self.released.add(b)
        self.clock[a][a] += 1
        err = ""
        if name in ("put", "pws", "get", "copy"):
            err = self._copy(a, m)               # a memory-channel pws does not signal [K]
        elif name in ("re", "res", "rre", "rres"):
            total = None
            for s in m.srcs:
                vals, err = self._read(a, m, s)
                if err:
                    return True, err
                total = vals if total is None else [_plus(x, y) for x, y in zip(total, vals)]
            for d in m.dsts:
                if (err := self._write(a, m, d, total)):
                    break
        if err:
            return True, err
        if name in _SIGNALS or (name == "pws" and m.ctype == "port"):
            for g in m.chans:
                p, o = self.ordinal[(r, m.ctype, g)]
                self.signals[(r, p, m.ctype, o)].append(list(self.clock[a]) if name != "rlxsignal" else None)
        elif name == "sem_release":
            for s in m.sems:
                self.sems[(r, s)].append(list(self.clock[a]))
        return True, ""
