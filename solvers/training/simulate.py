"""One training iteration on a design: the direct-connect paper's simulator (App. A.4, Fig. 16), issue 57.

Two streams. The **compute** stream runs the layers' forward passes in order, then their backward passes in
reverse. The **communication** stream runs one collective at a time, in the order they are issued:

* data parallelism (``dp``, PyTorch DDP): during backward each layer's gradients join the open bucket; once the
  bucket holds at least its capacity (1 MB, 10 MB, 100 MB or 1 GB, MB = 2^20 bytes as the paper's tables) it is
  allreduced, overlapping the backward compute that follows; the last, partial bucket goes when backward ends.
  ``bucket="best"`` simulates the four capacities and keeps the fastest iteration (ties: the smaller bucket).
* expert parallelism (``ep``): experts are sharded over all nodes (experts / nodes each; the number of experts must
  be a multiple of the number of nodes), the other layers replicated and allreduced as in ``dp``; expert
  parameters are never allreduced. Before and after each expert layer, forward and backward, an all-to-all moves
  the node's routed tokens (tokens x d_model x bytes an element, uniform over the nodes); it waits for the
  communication stream (an all-to-all never overlaps an allreduce) and blocks the compute stream until it ends.
* beyond the paper, ``tp``: the whole design is one tensor-parallel group (a box of GPUs behind a switch, say):
  every layer's compute is split N ways and each layer's output activations are allreduced once forward and once
  backward, blocking compute; no gradient allreduce (one replica). ``pp``: the design's nodes are pipeline stages
  in node order, layers split into contiguous stages of about equal compute, GPipe with the local batch as
  microbatches; each microbatch's activations cross each stage boundary forward and back, each crossing priced
  alpha + bytes / B. Their exposed communication is reported in ``allreduce_exposed_ms`` (what is neither compute
  nor all-to-all); the pipeline's fill and drain are compute-stream time.
* beyond the paper, ``tp-dp`` on a design made of boxes (``solvers.training.hybrid``, where the placement is
  stated): tensor parallel inside a box (activation allreduces among the box's GPUs, blocking compute), data
  parallel across boxes (each TP rank's DDP buckets allreduced among the GPUs of that rank in every box, all such
  groups at once on the shared fabric), priced by the runtime model on verified group schedules; ``tp-pp``: each
  box one TP group and one GPipe stage, the boxes in order, stage boundaries crossed on every rail at once.

Every allreduce is priced by the design's cheapest verified schedule (``solvers.training.pricing``), every
all-to-all by the MCF rate. Times are kept as whole multiples of 2^-20 ms (about a nanosecond), so that sums are
exact in floating point: ``compute_ms + allreduce_exposed_ms + alltoall_ms == iteration_ms`` holds bit for bit,
and the timeline's last bar ends at ``iteration_ms``. ``compute_ms`` is the compute stream's busy time,
``alltoall_ms`` the all-to-alls' total (each blocks compute, so all of it is exposed), and
``allreduce_exposed_ms`` the rest: compute waiting for an allreduce to free the stream, and the allreduces still
running after backward.
"""
from __future__ import annotations

from typing import Sequence

from topologies.model import Topology

from .jobs import Layer, ModelSpec, TrainingError, build_layers, preset, scaled, vocabulary_parallel
from .timeline import BUCKETS, CollectiveCost, Event, Iteration, Streams, best_bucket, even_stages, finish_iteration

__all__ = ["BUCKETS", "CollectiveCost", "Event", "Iteration", "PARALLEL", "simulate_iteration"]

PARALLEL = ("dp", "ep", "tp", "pp", "tp-dp", "tp-pp")


class _Prices:
    """Per-size memo of the design's prices, and the ``CollectiveCost`` rows they make."""

    def __init__(self, prices, workload, topo, runtime: bool):
        self.p, self.w, self.topo, self.runtime = prices, workload, topo, runtime
        self.memo: dict = {}
        self.counts: dict = {}

    def allreduce(self, nbytes: float) -> float:
        key = ("allreduce", nbytes)
        if key not in self.memo:
            us, algo = self.p.allreduce_us(nbytes, self.w.alpha_us, self.w.bandwidth_gbs)
            how = "step model"
            if self.runtime:
                run = _runtime_us(self.topo, algo, nbytes, self.w, self.p)
                if run is not None:
                    us, how = run, "runtime model"
            self.memo[key] = (us / 1e3, how, algo)
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.memo[key][0]

    def alltoall(self, nbytes: float) -> float:
        key = ("alltoall", nbytes)
        if key not in self.memo:
            self.memo[key] = (self.p.alltoall_us(nbytes, self.w.bandwidth_gbs) / 1e3, "MCF", None)
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.memo[key][0]

    def point(self, nbytes: float, what: str) -> float:
        key = (what, nbytes)
        self.memo.setdefault(key, ((self.w.alpha_us + nbytes / (self.w.bandwidth_gbs * 1e3)) / 1e3,
                                   "alpha + bytes / B", None))
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.memo[key][0]

    def rows(self) -> tuple[CollectiveCost, ...]:
        out = []
        for (coll, nbytes), count in sorted(self.counts.items()):
            ms, how, algo = self.memo[(coll, nbytes)]
            out.append(CollectiveCost(coll, nbytes, count, ms, how, algo))
            if coll == "alltoall":
                sched = self.p.alltoall_schedule_us(nbytes, self.w.alpha_us, self.w.bandwidth_gbs)
                if sched is not None:
                    out.append(CollectiveCost("alltoall", nbytes, 0, sched / 1e3,
                                              "alltoall schedule (shown, not used)", self.p.alltoall_schedule.algo))
        return tuple(out)


def _runtime_us(topo, algo, nbytes, workload, prices) -> float | None:
    from ..results_cache import ResultsCache, cached_synthesize
    from ..runtime import Workload
    from .pricing import RUNTIME_MAX_TRANSFERS

    cand = next(c for c in prices.allreduce if c.algo == algo)
    if cand.transfers > RUNTIME_MAX_TRANSFERS:
        return None
    result, _ = cached_synthesize(topo, algo, "allreduce", cache=ResultsCache.default(), warn=None)
    w = Workload(nbytes, workload.prices, workload.alpha_us, workload.bandwidth_gbs, workload.source)
    return w.price(result.topology, result.schedule, costs=result.cost).time_us


def _dp_ep(layers: Sequence[Layer], ep: bool, cap: float | None, prices: _Prices) -> Streams:
    s = Streams()
    for layer in layers:
        if ep and layer.expert:
            s.comm("alltoall", f"{layer.name} dispatch", prices.alltoall(layer.activation_bytes),
                   layer.activation_bytes, True)
            s.compute("forward", layer.name, layer.forward_ms, s.last_comm)
            s.comm("alltoall", f"{layer.name} combine", prices.alltoall(layer.activation_bytes),
                   layer.activation_bytes, True)
        else:
            s.compute("forward", layer.name, layer.forward_ms, s.last_comm if ep else None)
    bucket, names, n = 0.0, [], 0

    def flush():
        nonlocal bucket, names, n
        if bucket > 0:
            label = f"bucket {n}: {names[0]}" + (f" .. {names[-1]}" if len(names) > 1 else "")
            s.comm("allreduce", label, prices.allreduce(bucket), bucket, False)
            n += 1
        bucket, names = 0.0, []

    for layer in reversed(layers):
        wait = None
        if ep and layer.expert:
            wait = s.comm("alltoall", f"{layer.name} combine grad", prices.alltoall(layer.activation_bytes),
                          layer.activation_bytes, True)
        elif ep and s.last_comm is not None and s.events[s.last_comm].kind == "alltoall":
            wait = s.last_comm
        s.compute("backward", layer.name, layer.backward_ms, wait)
        if ep and layer.expert:
            s.comm("alltoall", f"{layer.name} dispatch grad", prices.alltoall(layer.activation_bytes),
                   layer.activation_bytes, True)
            continue
        if layer.param_bytes > 0:
            bucket += layer.param_bytes
            names.append(layer.name)
            if cap is not None and bucket >= cap:
                flush()
    flush()
    return s


def _tp(layers: Sequence[Layer], nodes: int, prices: _Prices) -> Streams:
    s = Streams()
    parts = vocabulary_parallel(scaled(layers, 1.0 / nodes))
    for layer in parts:
        s.compute("forward", layer.name, layer.forward_ms, s.last_comm)
        if layer.activation_bytes > 0 and nodes > 1:
            s.comm("tp", f"{layer.name} activations", prices.allreduce(layer.activation_bytes),
                   layer.activation_bytes, True)
    for layer in reversed(parts):
        s.compute("backward", layer.name, layer.backward_ms, s.last_comm)
        if layer.activation_bytes > 0 and nodes > 1:
            s.comm("tp", f"{layer.name} input grads", prices.allreduce(layer.activation_bytes),
                   layer.activation_bytes, True)
    return s


def _pp(layers: Sequence[Layer], nodes: int, microbatches: int, prices: _Prices) -> Streams:
    """GPipe on ``nodes`` stages: the timeline is the last stage's (it finishes last)."""
    stages = even_stages(layers, min(nodes, len(layers)))
    m = microbatches
    fwd = [sum(l.forward_ms for l in st) / m for st in stages]
    bwd = [sum(l.backward_ms for l in st) / m for st in stages]
    edge = [st[-1].activation_bytes / m for st in stages[:-1]]
    s = Streams()
    # the first microbatch reaches the last stage after every earlier stage and crossing; the rest follow at the
    # pace of the slowest stage (each crossing overlaps the next microbatch's compute)
    slow_f, slow_b = max(fwd), max(bwd)
    fill = sum(fwd[:-1])
    s.compute("forward", "pipeline fill (stages before the last)", fill)
    for b in edge:
        s.comm("pp", "activations to the next stage", prices.point(b, "pp send"), b, True)
    for j in range(m):
        s.compute("forward", f"microbatch {j} (pace of the slowest stage)", fwd[-1] if j == 0 else slow_f)
    for j in range(m):
        s.compute("backward", f"microbatch {j} (pace of the slowest stage)", bwd[-1] if j == 0 else slow_b)
    for b in reversed(edge):
        s.comm("pp", "gradients to the previous stage", prices.point(b, "pp send"), b, True)
    s.compute("backward", "pipeline drain (stages before the last)", sum(bwd[:-1]))
    return s


def _layers(model, profile, nodes, parallel, gpu_name, efficiency, bytes_per_param) -> tuple[list[Layer], str]:
    if profile is not None:
        from .profile import read_profile

        layers = list(profile) if not isinstance(profile, (str, bytes)) and not hasattr(profile, "__fspath__") \
            else read_profile(profile)
        name = model if isinstance(model, str) and model else "profile"
        if parallel == "ep":
            _check_ep(None, nodes, layers)
        return layers, name
    spec = model if isinstance(model, ModelSpec) else preset(model)
    if parallel == "ep":
        _check_ep(spec, nodes, None)
    if not spec.per_gpu_batch and spec.batch < nodes and parallel in ("dp", "ep"):
        raise TrainingError(f"{spec.name}'s global batch of {spec.batch} sequences gives {nodes} nodes less than "
                            f"one sequence each")
    # tp and pp run one replica over the whole design: it sees the whole batch (a global batch is not divided
    # among the nodes first; _tp and _pp divide the replica's work among them)
    replicas = 1 if parallel in ("tp", "pp") else nodes
    layers = build_layers(spec, replicas, gpu_name, efficiency, bytes_per_param, expert_parallel=parallel == "ep")
    return layers, spec.name


OPTIMIZER_BYTES_PER_PARAM = 12       # Adam's FP32 master copy, first and second moments


def memory_note(layers: Sequence[Layer], nodes: int, parallel: str, bytes_per_param: float, g) -> str | None:
    """A note when one GPU's model state alone -- weights and gradients at ``bytes_per_param`` plus Adam's
    ``OPTIMIZER_BYTES_PER_PARAM`` a parameter, activations left out -- is over the GPU's memory (App. A.4 picks N so
    that the model fits; this simulator times what it is given and says so). Under tp and pp one replica's state is
    spread over the nodes; otherwise each node holds its layers' ``param_bytes`` (an expert layer: its shard)."""
    params = sum(l.param_bytes for l in layers) / bytes_per_param
    if parallel in ("tp", "pp"):
        params /= nodes
    need = params * (2 * bytes_per_param + OPTIMIZER_BYTES_PER_PARAM) / 1e9
    if need <= g.memory_gb:
        return None
    return (f"memory: the model state alone is {need:,.0f} GB a GPU (weights and gradients at {bytes_per_param:g} "
            f"bytes, Adam's {OPTIMIZER_BYTES_PER_PARAM} bytes a parameter), over the {g.name}'s {g.memory_gb:g} GB: "
            f"the paper picks N so the model fits; timed as given")


def check_request(model, profile, nodes: int) -> None:
    """Expert parallelism's refusals (``_check_ep``) for ``model`` or ``profile`` on ``nodes`` nodes, before any
    pricing."""
    if profile is not None:
        from .profile import read_profile

        layers = list(profile) if not isinstance(profile, (str, bytes)) and not hasattr(profile, "__fspath__") \
            else read_profile(profile)
        _check_ep(None, nodes, layers)
    else:
        _check_ep(model if isinstance(model, ModelSpec) else preset(model), nodes, None)


def _check_ep(spec: ModelSpec | None, nodes: int, layers) -> None:
    if spec is not None:
        if not spec.moe:
            raise TrainingError(f"expert parallelism needs a mixture-of-experts model; {spec.name} has no experts")
        if spec.experts < nodes or spec.experts % nodes:
            raise TrainingError(f"expert parallelism shards {spec.name}'s {spec.experts} experts over all {nodes} "
                                f"nodes: the experts must be a whole multiple of the nodes")
    elif not any(l.expert for l in layers):
        raise TrainingError("expert parallelism needs a profile with at least one expert layer")


def simulate_iteration(model, design, parallel: str = "dp", gpu: str = "A100", bucket="best", profile=None,
                       workload=None, efficiency: float | None = None, bytes_per_param: float = 2, *,
                       runtime: bool = False, algos=None, cache="default", microbatches: int | None = None,
                       prices=None, tp_degree: int | None = None) -> Iteration:
    """One iteration of ``model`` (a preset's name or a ``ModelSpec``; with ``profile``, a label) on ``design``
    (an expression or a Topology) under ``parallel`` (module docstring). ``profile``: a CSV path or a list of
    ``Layer``s (then ``gpu`` and ``efficiency`` are not used); ``workload``: the prices (alpha, B; default the
    paper's 10 us and 100 Gb/s); ``bucket``: "best", a name of ``BUCKETS`` or bytes; ``runtime``: price allreduces
    by the runtime model where the schedule is small enough; ``algos``: the allreduce candidates; ``prices``: a
    ``DesignPrices`` already made for this design (not used by ``tp-dp``, ``tp-pp``); ``tp_degree``: ``tp-dp``'s
    TP group size (default the whole box)."""
    from ..runtime import Workload
    from .jobs import gpu as gpu_of
    from .pricing import design_prices

    if parallel not in PARALLEL:
        raise TrainingError(f"unknown parallelism {str(parallel)[:20]!r} (choose from {', '.join(PARALLEL)})")
    g = gpu_of(gpu)
    topo = _topology(design)
    nodes = topo.n
    if parallel in ("tp-dp", "tp-pp"):
        from .hybrid import simulate_hybrid

        w = workload if workload is not None else Workload(1.0, "uniform", 10.0, 12.5)
        return simulate_hybrid(model, topo, parallel, gpu, bucket, profile, w, efficiency, bytes_per_param,
                               tp_degree, microbatches)
    layers, name = _layers(model, profile, nodes, parallel, gpu, efficiency, bytes_per_param)
    if not layers:
        raise TrainingError("the job has no layers")
    w = workload if workload is not None else Workload(1.0, "uniform", 10.0, 12.5)
    if prices is None:
        prices = design_prices(topo, algos, alltoall=parallel == "ep", cache=cache)
    label = prices.design
    notes = [f"compute: {'profile' if profile is not None else 'FLOPs model on ' + g.name}",
             f"allreduce: cheapest of {', '.join(c.algo for c in prices.allreduce) or 'none'} "
             f"({'runtime model where small enough' if runtime else 'step model T_L alpha + T_B M/B'})",
             f"prices: alpha {w.alpha_us:g} us, B {w.bandwidth_gbs:g} GB/s per node"]
    if parallel == "ep":
        notes.append(f"all-to-all: MCF ({prices.mcf_note}); schedule: {prices.alltoall_note}")
    memory = memory_note(layers, nodes, parallel, bytes_per_param, g)
    if memory:
        notes.append(memory)
    head = (label, nodes, name, parallel, g.name)
    if parallel == "tp":
        p = _Prices(prices, w, topo, runtime)
        return finish_iteration(_tp(layers, nodes, p), *head, None, p, (), notes)
    if parallel == "pp":
        spec = None if profile is not None else (model if isinstance(model, ModelSpec) else preset(model))
        m = microbatches or (spec.batch if spec is not None and spec.per_gpu_batch else 8)
        p = _Prices(prices, w, topo, runtime)
        return finish_iteration(_pp(layers, nodes, m, p), *head, None, p, (), notes)
    def run(cap):
        p = _Prices(prices, w, topo, runtime)
        return _dp_ep(layers, parallel == "ep", cap, p), p

    cap, s, p, tried = best_bucket(bucket, run, notes)
    return finish_iteration(s, *head, cap, p, tried, notes)


def _topology(design) -> Topology:
    if isinstance(design, Topology):
        return design
    from topologies import parse_topology

    return parse_topology(str(design), max_nodes=4096)

