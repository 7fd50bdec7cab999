"""Hybrid parallelism on a switched cluster: tensor parallel inside a box, data parallel across boxes (``tp-dp``)
or pipeline parallel across boxes (``tp-pp``); issue 57, beyond the direct-connect paper, whose App. A.4 simulates
data and expert parallelism only.

**Placement.** A design made of boxes names its GPUs ``box.gpu`` (``b0.g3`` of ``dgx_a100`` and ``cluster``,
``c1.g5`` of ``mi250``): a box is every GPU whose name has the same prefix before the first dot, in rank order.
With a TP degree ``t`` dividing the box size (default: the whole box), each box's GPUs are cut into consecutive
TP groups of ``t``; a GPU's TP rank is its position in its group; the DP group of TP rank r is every GPU of TP
rank r (on ``dgx_a100(boxes=K)`` with t = 8: GPU j of every box, the "rail" of NIC j). Refused in one line: a
design without boxes or with one, boxes of unequal size, a TP degree that does not divide the box.

**The iteration** (Megatron-style TP layers, PyTorch-DDP over the replicas): every layer's compute is split t
ways; after each layer's forward and each layer's backward its activations (the whole [tokens, d] tensor of the
replica) are allreduced inside the TP group, blocking compute; the output layer is vocabulary-parallel with a
parallel loss (Megatron's), so around it the hidden states' size is allreduced, never the logits. In backward
each layer's gradients, 1/t of its parameters per GPU, join the open DDP bucket, allreduced in its DP group when
it fills (capacities as ``timeline.BUCKETS``, "best" tries the four), overlapping the backward compute that
follows. A replica is one TP
group; the global batch is data parallelism's on the same GPUs (a per-GPU batch preset gives each replica t
times its per-GPU batch; a global batch is split over the replicas). The TP allreduce runs on the compute stream
(as Megatron issues it), the DP buckets on the communication stream, one at a time; when the TP and DP schedules
share a link of the fabric the TP allreduce also waits for the communication stream (the notes say which held).

**Pricing** (the studio's verified schedules, timed by the runtime model with the workload's prices on the
*whole* fabric, so that link speeds are scaled as for every other figure):

* TP: each candidate synthesizer (``SUB_ALGOS``) builds the allreduce on the *box sub-fabric* -- the TP group's
  GPUs, the links among them and the box's own switches that join two or more of them (a NIC, which joins one
  GPU to the outside, is left out); the schedule is mapped back onto the whole fabric as a schedule among the
  group (``Schedule.group``), verified there by the simulator, and priced by the runtime model; a size costs the
  fastest candidate. Every TP group of every box runs the same at once on links of its own.
* DP: each DP group's allreduce is built the same way on its sub-fabric -- the group's GPUs, the switches outside
  every box (``ib0``, ``spine``) and the box switches that reach a member (its NIC), switches left with fewer than
  two neighbours pruned -- mapped back, verified, and all DP groups are timed *together* by the runtime model's
  overlay (``solvers.runtime.overlay``, the tenants machinery: links shared, each group's M its own); a bucket
  costs the overlay's makespan with the candidate that is fastest alone for every group.

**tp-pp**: each box is one TP group (the TP degree is the box) and one GPipe stage, box k stage k, the layers
cut into contiguous stages of about equal compute (``timeline.even_stages``), the replica's batch in
``microbatches`` (default one sequence each, at most ``MICROBATCHES``); the timeline is the last stage's as
``pp``'s: the fill, the microbatches at the pace of the slowest stage (its compute plus its TP allreduces of 1/m
of each layer's activations), the drain. A stage boundary is crossed by every TP rank r sending the microbatch's activations
(the whole tensor, which every rank holds after its allreduce; no scatter-gather) to rank r of the next box: a
broadcast among those two GPUs (``SEND_ALGOS``) built on the rail's sub-fabric, mapped back and verified, all
ranks' sends timed together by the overlay. No data parallelism: the one replica takes the global batch of data
parallelism on the same GPUs.

Times per (collective, size) are kept for the call; the Iteration's notes state the placement and the pricing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from topologies.model import Link, Topology

from ..core.schedule import Collective, Schedule, Transfer
from .jobs import Layer, ModelSpec, TrainingError, build_layers, preset, scaled, vocabulary_parallel
from .timeline import CollectiveCost, Event, Streams, best_bucket, even_stages, finish_iteration, quantized

__all__ = ["GroupPricer", "HYBRID", "MICROBATCHES", "Placement", "SEND_ALGOS", "SUB_ALGOS", "group_allreduces",
           "group_schedules", "placement", "simulate_hybrid", "sub_fabric_nodes"]

HYBRID = ("tp-dp", "tp-pp")
SUB_ALGOS = ("ring", "shifted_ring", "dbt", "rhd", "forestcoll")
SEND_ALGOS = ("direct", "sptree", "binomial")
MICROBATCHES = 32


@dataclass(frozen=True)
class Placement:
    """Where the groups sit (module docstring): node indices of the whole fabric."""

    boxes: tuple[tuple[int, ...], ...]
    tp: int
    tp_groups: tuple[tuple[int, ...], ...]
    dp_groups: tuple[tuple[int, ...], ...]

    @property
    def replicas(self) -> int:
        return len(self.tp_groups)

    def describe(self, topo: Topology, pipeline: bool = False) -> str:
        names = topo.names
        box = self.boxes[0]
        head = names[box[0]].split(".", 1)[0]
        if pipeline:
            return (f"placement: {len(self.boxes)} boxes of {len(box)} GPUs, box k is pipeline stage k; each box one "
                    f"TP group ({', '.join(names[v] for v in box)} in box {head}); GPU r of box k sends to GPU r of "
                    f"box k+1 on its rail")
        return (f"placement: {len(self.boxes)} boxes of {len(box)} GPUs; TP groups of {self.tp} consecutive GPUs "
                f"of a box ({', '.join(names[v] for v in self.tp_groups[0])} in box {head}), "
                f"{self.replicas} replicas; DP group of TP rank r = GPU r of every TP group "
                f"({len(self.dp_groups)} groups of {len(self.dp_groups[0])}: "
                f"{', '.join(names[v] for v in self.dp_groups[0])} for rank 0)")


def placement(topo: Topology, tp: int | None = None, what: str = "tp-dp") -> Placement:
    """The TP and DP groups of ``topo`` (module docstring); TrainingError, one line, when it has no boxes, boxes
    of unequal size, or ``tp`` does not divide the box (``what``: the parallelism named in the message)."""
    label = topo.expr or topo.name or "the design"
    boxes: dict[str, list[int]] = {}
    for v in topo.compute_nodes:
        head, dot, _ = topo.names[v].partition(".")
        if not dot or not head:
            raise TrainingError(f"{what} needs a design made of boxes (GPUs named box.gpu, as dgx_a100, mi250, "
                                f"cluster); {label[:60]} has GPU {topo.names[v][:30]!r} in none")
        boxes.setdefault(head, []).append(v)
    if len(boxes) < 2:
        raise TrainingError(f"{what} needs two or more boxes; {label[:60]} has {len(boxes)} (use tp)")
    sizes = sorted({len(b) for b in boxes.values()})
    if len(sizes) > 1:
        raise TrainingError(f"{what} needs boxes of equal size; {label[:60]} has boxes of "
                            f"{', '.join(map(str, sizes))} GPUs")
    size = sizes[0]
    if tp is None:
        tp = size
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1 or size % tp:
        raise TrainingError(f"the TP degree must be a whole divisor of the box's {size} GPUs, got {tp!r}"[:120])
    rows = [tuple(b) for b in boxes.values()]
    tp_groups = tuple(row[k:k + tp] for row in rows for k in range(0, size, tp))
    dp_groups = tuple(tuple(g[r] for g in tp_groups) for r in range(tp))
    return Placement(tuple(rows), tp, tp_groups, dp_groups)


# ------------------------------------------------------------------------------------------------ sub-fabrics
def _neighbours(topo: Topology, v: int) -> set[int]:
    return {topo.links[i].dst for i in topo.out_links[v]} | {topo.links[i].src for i in topo.in_links[v]}


def sub_fabric_nodes(topo: Topology, group, inside_box: bool) -> list[int]:
    """The nodes of a group's sub-fabric (module docstring): the group's GPUs and the switches allowed, pruned of
    switches with fewer than two neighbours inside it."""
    members = set(group)
    heads = {topo.names[v].partition(".")[0] for v in members}
    keep = set(members)
    for v in topo.switch_nodes:
        head, dot, _ = topo.names[v].partition(".")
        gpus = {u for u in _neighbours(topo, v) if topo.is_compute(u)}
        if dot and head in heads:
            if inside_box:
                if len(gpus & members) >= 2:
                    keep.add(v)
            elif gpus and gpus <= members:
                keep.add(v)
        elif not dot and not inside_box:
            keep.add(v)
    changed = True
    while changed:
        changed = False
        for v in [v for v in keep if v not in members]:
            if len(_neighbours(topo, v) & keep) < 2:
                keep.discard(v)
                changed = True
    return sorted(keep)


def _sub(topo: Topology, nodes: list[int]) -> tuple[Topology, list[int], list[int]]:
    """(the induced topology, its node -> whole node, its link -> whole link); GPUs first, in rank order."""
    order = sorted(nodes, key=lambda v: (not topo.is_compute(v), v))
    where = {v: i for i, v in enumerate(order)}
    links, lmap = [], []
    for i, l in enumerate(topo.links):
        if l.src in where and l.dst in where:
            links.append(Link(where[l.src], where[l.dst], l.bandwidth, l.alpha))
            lmap.append(i)
    sub = Topology(tuple(topo.names[v] for v in order), tuple(topo.kinds[v] for v in order), tuple(links),
                   name=f"{topo.name or 'design'} [{len(order)} nodes]", expr="")
    return sub, order, lmap


def group_allreduces(topo: Topology, group, inside_box: bool, algos=SUB_ALGOS) -> list[Schedule]:
    """Every candidate's allreduce among ``group`` (module docstring): synthesized (and verified) on the
    sub-fabric, mapped onto ``topo`` as a schedule among the group, verified again there; those that fail either
    are dropped."""
    return group_schedules(topo, group, inside_box, Collective.ALLREDUCE, algos)


def group_schedules(topo: Topology, group, inside_box: bool, collective: Collective, algos,
                    root: int | None = None) -> list[Schedule]:
    """``group_allreduces`` for any collective; ``root`` (a node of ``topo`` in the group) for a rooted one."""
    from ..core.errors import NotApplicable, ScheduleError
    from ..core.verify import verify
    from ..synthesize import synthesize

    sub, order, lmap = _sub(topo, sub_fabric_nodes(topo, group, inside_box))
    out = []
    for algo in algos:
        try:
            result = synthesize(sub, algo, collective, root=None if root is None else topo.names[root])
        except (NotApplicable, ScheduleError, ValueError):
            continue
        if not result.verification.ok or result.topology.names != sub.names:
            continue
        moved = [Transfer(order[t.shard], t.lo, t.hi, lmap[t.link], t.step, t.reduce)
                 for t in result.schedule.transfers]
        schedule = Schedule(collective, moved, algo, {"sub-fabric": sub.name}, group=group,
                            root=None if result.schedule.root is None else order[result.schedule.root])
        if verify(topo, schedule).ok:
            out.append(schedule)
    if not out:
        where = "inside a box" if inside_box else "across the boxes"
        raise TrainingError(f"no verified {collective.value} among {len(group)} GPUs {where} of "
                            f"{(topo.expr or topo.name)[:60]} (tried {', '.join(algos)})")
    return out


def _links(schedules) -> set[int]:
    return {t.link for s in schedules for t in s.transfers}


class GroupPricer:
    """The runtime model's times (us) of the TP and DP allreduces of a placement, per size (module docstring)."""

    def __init__(self, topo: Topology, place: Placement, execution):
        self.topo, self.place, self.execution = topo, place, execution
        self.tp_scheds = group_allreduces(topo, place.tp_groups[0], True) if place.tp > 1 else []
        self._dp: list | None = None
        self._sends: dict = {}
        self.memo: dict = {}

    @property
    def dp_scheds(self) -> list[list[Schedule]]:
        """Each DP group's candidate allreduces (built on first use; none when a group is one GPU)."""
        if self._dp is None:
            place = self.place
            self._dp = [group_allreduces(self.topo, g, False) for g in place.dp_groups] \
                if len(place.dp_groups[0]) > 1 else []
        return self._dp

    @property
    def shared(self) -> bool:
        """Whether a TP schedule and a DP schedule use a common link."""
        return bool(_links(self.tp_scheds) & _links(s for c in self.dp_scheds for s in c))

    def _alone(self, schedule: Schedule, nbytes: float) -> float:
        from ..runtime import Model

        key = ("alone", id(schedule), nbytes)
        if key not in self.memo:
            self.memo[key] = float(Model(self.topo, schedule, self.execution).times([nbytes])[0][0])
        return self.memo[key]

    def tp_us(self, nbytes: float) -> tuple[float, str]:
        """(time, synthesizer) of the fastest TP allreduce of ``nbytes`` inside one group."""
        return min((self._alone(s, nbytes), s.algo) for s in self.tp_scheds)

    def dp_choice(self, nbytes: float) -> list[Schedule]:
        """Each DP group's candidate that is fastest alone at ``nbytes``."""
        return [min(c, key=lambda s: self._alone(s, nbytes)) for c in self.dp_scheds]

    def dp_us(self, nbytes: float) -> tuple[float, str]:
        """(makespan of every DP group's allreduce of ``nbytes`` at once, synthesizers) by the overlay."""
        from ..runtime.overlay import overlay

        key = ("dp", nbytes)
        if key not in self.memo:
            chosen = self.dp_choice(nbytes)
            timed = overlay(self.topo, chosen, [nbytes] * len(chosen), self.execution)
            self.memo[key] = (timed.makespan_us, "/".join(sorted({s.algo for s in chosen})))
        return self.memo[key]

    def dp_alone_us(self, nbytes: float) -> list[float]:
        """Each DP group's time alone on the fabric (the overlay's lower reference)."""
        return [self._alone(s, nbytes) for s in self.dp_choice(nbytes)]

    def send_scheds(self, boundary: int, backward: bool) -> list[list[Schedule]]:
        """tp-pp: for each TP rank r, the candidate sends (a broadcast among two GPUs) from GPU r of box
        ``boundary`` to GPU r of the next box (``backward``: the other way), each on its rail's sub-fabric."""
        key = (boundary, backward)
        if key not in self._sends:
            here, there = self.place.boxes[boundary], self.place.boxes[boundary + 1]
            self._sends[key] = [group_schedules(self.topo, (a, b), False, Collective.BROADCAST, SEND_ALGOS,
                                                root=b if backward else a) for a, b in zip(here, there)]
        return self._sends[key]

    def send_us(self, boundary: int, backward: bool, nbytes: float) -> tuple[float, str]:
        """(makespan of every rank's send of ``nbytes`` across ``boundary`` at once, synthesizers): overlay."""
        from ..runtime.overlay import overlay

        key = ("send", boundary, backward, nbytes)
        if key not in self.memo:
            chosen = [min(c, key=lambda s: self._alone(s, nbytes)) for c in self.send_scheds(boundary, backward)]
            timed = overlay(self.topo, chosen, [nbytes] * len(chosen), self.execution)
            self.memo[key] = (timed.makespan_us, "/".join(sorted({s.algo for s in chosen})))
        return self.memo[key]


# ------------------------------------------------------------------------------------------------ the iteration
def _layers(model, profile, place: Placement, gpu_name, efficiency, bytes_per_param, pipeline: bool = False
            ) -> tuple[list[Layer], str]:
    """One replica's layers: ``tp-dp``'s replica is a TP group, ``tp-pp``'s (``pipeline``) every GPU."""
    if profile is not None:
        from .profile import read_profile

        layers = list(profile) if not isinstance(profile, (str, bytes)) and not hasattr(profile, "__fspath__") \
            else read_profile(profile)
        return layers, model if isinstance(model, str) and model else "profile"
    spec = model if isinstance(model, ModelSpec) else preset(model)
    gpus, replicas = (place.tp * len(place.boxes), 1) if pipeline else (place.tp, place.replicas)
    if spec.per_gpu_batch:
        spec = replace(spec, batch=spec.batch * gpus)
    elif spec.batch < replicas:
        raise TrainingError(f"{spec.name}'s global batch of {spec.batch} sequences gives {replicas} replicas "
                            f"less than one sequence each")
    return build_layers(spec, replicas, gpu_name, efficiency, bytes_per_param, expert_parallel=False), spec.name


class _Rows:
    def __init__(self, pricer: GroupPricer):
        self.pricer, self.memo, self.counts = pricer, {}, {}

    def get(self, what: str, nbytes: float, count: int = 1, price=None) -> float:
        """The time in ms of ``what`` on ``nbytes`` (``price``: a function of the bytes giving (us, algo); the TP
        or DP pricer by default), counted ``count`` times in the iteration's rows."""
        key = (what, nbytes)
        if key not in self.memo:
            if price is None:
                price = self.pricer.tp_us if what == "tp allreduce" else self.pricer.dp_us
            us, algo = price(nbytes)
            self.memo[key] = (us / 1e3, algo)
        self.counts[key] = self.counts.get(key, 0) + count
        return self.memo[key][0]

    def rows(self):
        how = {"tp allreduce": "runtime model, one TP group on the box sub-fabric's schedule",
               "dp allreduce": f"runtime model, all {len(self.pricer.place.dp_groups)} DP groups at once (overlay)"}
        send = f"runtime model, every TP rank's send on its rail at once (overlay)"
        return tuple(CollectiveCost(c, b, n, self.memo[(c, b)][0], how.get(c, send), self.memo[(c, b)][1])
                     for (c, b), n in sorted(self.counts.items()))


def _run(layers: list[Layer], tp: int, cap, rows: _Rows, shared: bool, dp: bool):
    s = Streams()

    def tp_allreduce(label, nbytes):
        ms = quantized(rows.get("tp allreduce", nbytes))
        start = max(s.compute_free, s.comm_free) if shared else s.compute_free
        i = s._add(Event("tp", "tp", label, start, start + ms, nbytes),
                   (s.last_compute, s.last_comm if shared else None))
        s.compute_free = start + ms
        s.last_compute = i

    parts = vocabulary_parallel(scaled(layers, 1.0 / tp))
    for layer in parts:
        s.compute("forward", layer.name, layer.forward_ms)
        if layer.activation_bytes > 0 and tp > 1:
            tp_allreduce(f"{layer.name} activations", layer.activation_bytes)
    bucket, names, n = 0.0, [], 0

    def flush():
        nonlocal bucket, names, n
        if bucket > 0 and dp:
            label = f"bucket {n}: {names[0]}" + (f" .. {names[-1]}" if len(names) > 1 else "")
            s.comm("allreduce", label, rows.get("dp allreduce", bucket), bucket, False)
            n += 1
        bucket, names = 0.0, []

    for layer in reversed(parts):
        s.compute("backward", layer.name, layer.backward_ms)
        if layer.activation_bytes > 0 and tp > 1:
            tp_allreduce(f"{layer.name} input grads", layer.activation_bytes)
        if layer.param_bytes > 0:
            bucket += layer.param_bytes / tp
            names.append(layer.name)
            if cap is not None and bucket >= cap:
                flush()
    flush()
    return s


def _run_pp(layers: list[Layer], tp: int, stages_n: int, m: int, rows: _Rows):
    """GPipe over the boxes (``simulate._pp``'s timeline: the last stage's) with each stage a TP group: a
    microbatch's stage time is its compute split ``tp`` ways plus its layers' TP allreduces of 1/m of their
    activations; a stage boundary is crossed by every TP rank sending the microbatch's activations to the same
    rank of the next box, all ranks at once."""
    parts = vocabulary_parallel(scaled(layers, 1.0 / tp))
    if len(parts) < stages_n:
        raise TrainingError(f"tp-pp puts contiguous layers on each of {stages_n} boxes; the job has "
                            f"{len(parts)} layers")
    stages = even_stages(parts, stages_n)
    s = Streams()

    def tp_ms(stage, count):
        return sum(rows.get("tp allreduce", l.activation_bytes / m, count) for l in stage
                   if l.activation_bytes > 0 and tp > 1)

    cf = [sum(l.forward_ms for l in st) / m for st in stages]
    cb = [sum(l.backward_ms for l in st) / m for st in stages]
    tf = [tp_ms(st, 2 * m) for st in stages]           # forward and backward: the same sizes, counted once here
    edge = [st[-1].activation_bytes / m for st in stages[:-1]]

    def tp_event(label, ms, nbytes):
        ms = quantized(ms)
        if ms <= 0:
            return
        start = s.compute_free
        i = s._add(Event("tp", "tp", label, start, start + ms, nbytes), (s.last_compute, s.last_comm))
        s.compute_free = start + ms
        s.last_compute = i

    def send(b, backward, nbytes):
        what = f"pp send b{b + 1}->b{b}" if backward else f"pp send b{b}->b{b + 1}"
        ms = rows.get(what, nbytes, m, lambda x: rows.pricer.send_us(b, backward, x))
        word = "gradients to the previous box" if backward else "activations to the next box"
        s.comm("pp", f"{word} (every rail)", ms, nbytes, True)

    pace_f = max(range(stages_n), key=lambda k: cf[k] + tf[k])
    pace_b = max(range(stages_n), key=lambda k: cb[k] + tf[k])
    s.compute("forward", "pipeline fill (stages before the last)", sum(cf[:-1]))
    tp_event("TP allreduces of the fill", sum(tf[:-1]), None)
    for b, x in enumerate(edge):
        send(b, False, x)
    for j in range(m):
        k = stages_n - 1 if j == 0 else pace_f
        s.compute("forward", f"microbatch {j} (pace of the slowest stage)", cf[k])
        tp_event(f"microbatch {j}: TP allreduces", tf[k], None)
    for j in range(m):
        k = stages_n - 1 if j == 0 else pace_b
        s.compute("backward", f"microbatch {j} (pace of the slowest stage)", cb[k])
        tp_event(f"microbatch {j}: TP allreduces (input grads)", tf[k], None)
    for b in reversed(range(len(edge))):
        send(b, True, edge[b])
    s.compute("backward", "pipeline drain (stages before the last)", sum(cb[:-1]))
    tp_event("TP allreduces of the drain", sum(tf[:-1]), None)
    return s


_PRICERS: dict = {}


def simulate_hybrid(model, topo: Topology, parallel: str, gpu: str, bucket, profile, workload, efficiency,
                    bytes_per_param, tp: int | None = None, microbatches: int | None = None):
    """One ``tp-dp`` or ``tp-pp`` iteration (module docstring) as ``simulate.Iteration``; ``simulate_iteration``
    calls it. ``tp``: the TP degree (default the box; ``tp-pp`` takes whole boxes only); ``microbatches``:
    ``tp-pp``'s (default one per sequence, at most ``MICROBATCHES``)."""
    from ..result_codec import topology_digest
    from .jobs import gpu as gpu_of

    if parallel not in HYBRID:
        raise TrainingError(f"unknown hybrid parallelism {str(parallel)[:20]!r} (choose from {', '.join(HYBRID)})")
    g = gpu_of(gpu)
    place = placement(topo, tp, parallel)
    pipeline = parallel == "tp-pp"
    if pipeline and place.tp != len(place.boxes[0]):
        raise TrainingError(f"tp-pp makes each box one TP group (TP degree {len(place.boxes[0])}), got {place.tp}")
    layers, name = _layers(model, profile, place, gpu, efficiency, bytes_per_param, pipeline)
    if not layers:
        raise TrainingError("the job has no layers")
    key = (topology_digest(topo), place.tp, workload.key)      # the same fabric and prices: the same schedules
    pricer = _PRICERS.get(key)
    if pricer is None:
        pricer = _PRICERS[key] = GroupPricer(topo, place, workload.execution)
    if len(_PRICERS) > 16:
        _PRICERS.pop(next(iter(_PRICERS)))
    notes = [f"compute: {'profile' if profile is not None else 'FLOPs model on ' + g.name}, split {place.tp} ways",
             place.describe(topo, pipeline),
             f"TP allreduce: fastest of {', '.join(sorted({s.algo for s in pricer.tp_scheds})) or 'none'} built on "
             f"the box sub-fabric (the group's GPUs and box switch), mapped onto the whole fabric among the group, "
             f"verified, runtime model; the output layer vocabulary-parallel (its input's size allreduced, not the "
             f"logits)"]
    head = (topo.expr or topo.name or "design", topo.n, name, parallel, g.name)
    if pipeline:
        m = microbatches
        if m is None:
            spec = None if profile is not None else (model if isinstance(model, ModelSpec) else preset(model))
            seqs = MICROBATCHES if spec is None else spec.batch * (topo.n if spec.per_gpu_batch else 1)
            m = max(1, min(seqs, MICROBATCHES))
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise TrainingError(f"microbatches must be a whole number of at least 1, got {m!r}"[:100])
        notes += [f"PP: GPipe over the {len(place.boxes)} boxes in order, {m} microbatches; a stage boundary is "
                  f"crossed by every TP rank sending the microbatch's activations to the same rank of the next box "
                  f"on its rail ({', '.join(sorted({x.algo for c in pricer.send_scheds(0, False) for x in c}))}, "
                  f"verified), all ranks at once (overlay); no data parallelism (one replica)",
                  f"prices: {workload.price_label} (runtime model on the whole fabric)"]
        rows = _Rows(pricer)
        s = _run_pp(layers, place.tp, len(place.boxes), m, rows)
        return finish_iteration(s, *head, None, _Table(rows), (), notes)
    notes += [f"DP allreduce: each group's fastest of "
              f"{', '.join(sorted({s.algo for c in pricer.dp_scheds for s in c})) or 'none'} on its rail (its "
              f"GPUs, their NICs, the switches outside the boxes), verified, all groups timed together by the "
              f"overlay",
              "TP and DP schedules share links: the TP allreduce waits for the communication stream" if pricer.shared
              else "TP and DP schedules share no link: TP allreduces run on the compute stream beside the DP "
                   "buckets",
              f"prices: {workload.price_label} (runtime model on the whole fabric)"]
    def run(cap):
        rows = _Rows(pricer)
        return _run(layers, place.tp, cap, rows, pricer.shared, bool(pricer.dp_scheds)), rows

    cap, s, rows, tried = best_bucket(bucket, run, notes)
    return finish_iteration(s, *head, cap, _Table(rows), tried, notes)


class _Table:
    """What ``timeline.finish_iteration`` asks of its prices: the rows."""

    def __init__(self, rows: _Rows):
        self._rows = rows

    def rows(self):
        return self._rows.rows()
