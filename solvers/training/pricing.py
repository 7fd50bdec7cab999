"""What one design charges a training job for its collectives (issue 57; the direct-connect paper's App. A.4).

A design is priced once and the figures are kept (``DesignPrices``), so that every size afterwards is closed form:

* **allreduce**: every candidate synthesizer of the registry (``ALLREDUCE_ALGOS``; the textbook rings, DBT, RH&D,
  the expansions and BFB) is run through ``solvers.synthesize`` (which verifies the schedule); each verified
  schedule keeps its comm steps T_L and bandwidth factor T_B. A bucket of M bytes costs the cheapest of them by the
  step model T_L alpha + T_B M / B, the paper's alpha-beta model (App. A.2, A.4), row ``priced_by`` "step model".
  With ``runtime=True`` (and a schedule of at most ``RUNTIME_MAX_TRANSFERS`` transfers), that schedule is instead
  run through the studio's runtime model (``Workload.price``: pipelined, links shared), ``priced_by`` "runtime
  model"; the step model stays the choice of schedule.
* **all-to-all**: the MCF rate f of LP (3) (``solvers.directconnect.alltoall.mcf_rate``, App. A.5): every node
  sending M bytes in all takes (M/B) d / (N f) -- it drives the iteration, as in the paper. f is the certified
  lower end of the solver's bracket [f, upper]; where that is wider than ``OVERSTATED_GAP`` (a time limit stopped
  it) the note says the all-to-all time may be overstated by up to upper / f - 1. Beside it, where the
  fabric is small enough (``SCHEDULE_MAX_NODES``), the studio's synthesized all-to-all schedule (every piece on one
  shortest path, ``direct_alltoall``), verified by the simulator and priced by its step model, is shown, not used.

The figures are kept as one JSON record per (design, candidate list) in the results cache
(``ResultsCache.put_record``; the key holds the topology's digest and the code version), so a second run prices
the design without solving anything.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from fractions import Fraction

from topologies.model import Topology
from topologies.properties import degree

from ..core.cost import alpha_beta_us
from ..core.errors import NotApplicable, ScheduleError

__all__ = ["ALLREDUCE_ALGOS", "DesignPrices", "design_prices"]

ALLREDUCE_ALGOS = ("ring", "shifted_ring", "dbt", "rhd", "hierarchical", "expansion", "bfb")
# Above LARGE_NODES the Hamiltonian-cycle searches of the ring baselines take minutes (shifted_ring(1024): over
# 40 s), and BFB and the expansion synthesizer each take up to half a minute: there DBT and RH&D (closed forms that
# refuse a fabric in a second) are tried with the paper's own schedule for the design, the expansion synthesizer
# for an expansion (line graph, power, product, degree expansion, torus) and BFB for any other graph.
LARGE_NODES = 128
LARGE_BASE_ALGOS = ("dbt", "rhd", "bfb")
LARGE_EXPANSION_ALGOS = ("dbt", "rhd", "expansion")
EXPANSIONS = ("line(", "power(", "product(", "degree(", "torus(")
SCHEDULE_MAX_NODES = 64
RUNTIME_MAX_TRANSFERS = 200_000
FORMAT = 1
OVERSTATED_GAP = 0.02   # an MCF bracket wider than this is named in the note (the time may be overstated that much)


@dataclass(frozen=True)
class Candidate:
    """One verified allreduce schedule: its synthesizer, comm steps and bandwidth factor (exact, as text)."""

    algo: str
    steps: int
    tb: str
    transfers: int

    @property
    def tb_factor(self) -> float:
        return float(Fraction(self.tb))


@dataclass(frozen=True)
class DesignPrices:
    """A design's priced collectives (module docstring). ``mcf``: (f, certified upper or None, seconds, method)
    or None with ``mcf_note`` saying why; ``alltoall_schedule``: a Candidate or None with ``alltoall_note``."""

    design: str
    nodes: int
    degree: int
    allreduce: tuple[Candidate, ...]
    mcf: tuple[float, float | None, float, str] | None
    mcf_note: str
    alltoall_schedule: Candidate | None
    alltoall_note: str
    seconds: float
    cached: bool = False

    def allreduce_us(self, total_bytes: float, alpha_us: float, bandwidth_gbs: float) -> tuple[float, str]:
        """(time in us, synthesizer) of the cheapest verified allreduce of ``total_bytes`` by the step model."""
        if not self.allreduce:
            raise NotApplicable(f"no verified allreduce schedule on {self.design}")
        return min((alpha_beta_us(c.steps, Fraction(c.tb), total_bytes, alpha_us, bandwidth_gbs), c.algo)
                   for c in self.allreduce)

    def alltoall_us(self, total_bytes: float, bandwidth_gbs: float) -> float:
        """(M/B) d / (N f): every node sends ``total_bytes`` in all (App. A.5)."""
        if self.mcf is None:
            raise NotApplicable(f"no all-to-all rate on {self.design}: {self.mcf_note}")
        return total_bytes / (bandwidth_gbs * 1e3) * self.degree / (self.nodes * self.mcf[0])

    def alltoall_schedule_us(self, total_bytes: float, alpha_us: float, bandwidth_gbs: float) -> float | None:
        c = self.alltoall_schedule
        if c is None:
            return None
        # ``total_bytes`` is what one node sends in all; the schedule's M is the whole vector of N such inputs
        # (solvers.core.schedule: shard s, M/N bytes, is node s's input), so it is priced at N x total_bytes
        return alpha_beta_us(c.steps, Fraction(c.tb), total_bytes * self.nodes, alpha_us, bandwidth_gbs)

    def record(self) -> dict:
        out = asdict(self)
        out.pop("cached")
        return out

    @classmethod
    def from_record(cls, rec: dict) -> "DesignPrices":
        cand = [Candidate(**c) for c in rec["allreduce"]]
        sched = rec["alltoall_schedule"]
        mcf = rec["mcf"]
        return cls(rec["design"], int(rec["nodes"]), int(rec["degree"]), tuple(cand),
                   None if mcf is None else tuple(mcf), rec["mcf_note"],
                   None if sched is None else Candidate(**sched), rec["alltoall_note"], float(rec["seconds"]), True)


def _key(topo: Topology, algos: tuple[str, ...], alltoall: bool, mcf_time_limit) -> str:
    from ..result_codec import topology_digest
    from ..results_cache import code_version

    text = json.dumps({"what": "training design prices", "format": FORMAT, "topology": topology_digest(topo),
                       "algos": list(algos), "alltoall": alltoall, "mcf_time_limit": mcf_time_limit,
                       "code": code_version()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _candidates(topo: Topology, algos) -> list[Candidate]:
    """The verified allreduce schedules of ``algos`` on ``topo``; when none applies, BFB's (which runs on any
    strongly connected graph: an expansion that is not reverse-symmetric has no expansion allreduce)."""
    from ..synthesize import synthesize

    def one(algo):
        try:
            result = synthesize(topo, algo, "allreduce")
        except (NotApplicable, ScheduleError, ValueError):
            return None
        if not result.verification.ok:
            return None
        return Candidate(algo, int(result.cost.steps), str(result.cost.tb_factor), int(result.schedule.count))

    out = [c for c in map(one, algos) if c is not None]
    if not out and "bfb" not in algos:
        out = [c for c in [one("bfb")] if c is not None]
    return out


def _mcf(topo: Topology, time_limit: float | None, method: str | None = None) -> tuple[tuple | None, str]:
    from ..directconnect.alltoall import mcf_rate

    kw = {k: v for k, v in (("time_limit", time_limit), ("method", method)) if v is not None}
    try:
        a = mcf_rate(topo, **kw)
    except NotApplicable as exc:
        return None, str(exc)
    if not (a.f > 0 and math.isfinite(a.f)):
        return None, "the all-to-all LP found no positive rate"
    note = f"LP (3) by {a.method} in {a.seconds:.1f} s"
    if a.upper is not None:
        note += f", certified f in [{a.f:.6g}, {a.upper:.6g}] (the lower end used)"
    if not getattr(a, "reached", True):
        note += ", stopped by its time limit before the target gap"
    if a.upper is not None and a.gap > OVERSTATED_GAP:
        # the time is priced at the lower end f: the optimum's is at most f / upper of it
        note += (f"; the all-to-all time may be overstated by up to {100 * (a.upper / a.f - 1):.1f} % "
                 f"(a {100 * a.gap:.1f} % bracket)")
    return (float(a.f), None if a.upper is None else float(a.upper), float(a.seconds), a.method), note


def _alltoall_schedule(topo: Topology) -> tuple[Candidate | None, str]:
    if topo.n > SCHEDULE_MAX_NODES:
        return None, f"not built above {SCHEDULE_MAX_NODES} nodes (N^2 D(G) transfers)"
    from ..core.cost import cost
    from ..core.verify import verify
    from ..directconnect.direct_alltoall import direct_alltoall

    try:
        schedule = direct_alltoall(topo)
    except NotApplicable as exc:
        return None, str(exc)
    if not verify(topo, schedule).ok:
        return None, "the shortest-path all-to-all schedule failed verification"
    c = cost(topo, schedule)
    return Candidate("direct", int(c.steps), str(c.tb_factor), int(schedule.count)), \
        "every piece on one shortest path (direct_alltoall), verified, step model"


_MEMO: dict[str, DesignPrices] = {}


def default_algos(topo: Topology) -> tuple[str, ...]:
    """The allreduce candidates tried on ``topo`` (``ALLREDUCE_ALGOS``; above ``LARGE_NODES`` see there)."""
    if topo.n <= LARGE_NODES:
        return ALLREDUCE_ALGOS
    expr = (topo.expr or "").replace(" ", "").lower()
    return LARGE_EXPANSION_ALGOS if expr.startswith(EXPANSIONS) else LARGE_BASE_ALGOS


def design_prices(topo: Topology, algos: tuple[str, ...] | None = None, alltoall: bool = True,
                  cache="default", mcf_time_limit: float | None = None, refresh: bool = False,
                  mcf_method: str | None = None) -> DesignPrices:
    """The priced collectives of ``topo`` (module docstring), from the results cache when it holds them.
    ``algos``: the allreduce candidates (default ``default_algos``); ``alltoall``: price the all-to-all too (expert
    parallelism); ``cache``: a ``ResultsCache``, None for none, "default" for the user's; ``mcf_time_limit``:
    handed to ``mcf_rate`` (its own default when None; on a time limit the certified lower end is used);
    ``refresh``: price again and replace what the cache holds; ``mcf_method``: ``mcf_rate``'s method (its own
    default when None)."""
    from ..results_cache import ResultsCache, UnsafeCache

    if algos is None:
        algos = default_algos(topo)
    algos = tuple(algos)
    key = _key(topo, algos, alltoall, (mcf_time_limit, mcf_method))
    if key in _MEMO and not refresh:
        return _MEMO[key]
    store = ResultsCache.default() if cache == "default" else cache
    if store is not None and not refresh:
        try:
            rec = store.get_record(key, warn=None)
        except (UnsafeCache, OSError):
            store, rec = None, None
        if rec is not None and rec.get("format") == FORMAT:
            try:
                prices = DesignPrices.from_record(rec["prices"])
                _MEMO[key] = prices
                return prices
            except (KeyError, TypeError, ValueError):
                pass
    start = time.perf_counter()
    cands = _candidates(topo, algos)
    if alltoall:
        mcf, note = _mcf(topo, mcf_time_limit, mcf_method)
        sched, snote = _alltoall_schedule(topo)
    else:
        mcf, note, sched, snote = None, "not asked (no expert parallelism)", None, "not asked"
    prices = DesignPrices(topo.expr or topo.name or "design", topo.n, int(degree(topo)), tuple(cands), mcf, note,
                          sched, snote, time.perf_counter() - start)
    if store is not None:
        try:
            store.put_record(key, {"format": FORMAT, "prices": prices.record()})
        except (UnsafeCache, OSError):
            pass
    _MEMO[key] = prices
    return prices


AUTO_MCF_LIMIT_S = 15.0      # the MCF's limit at 1024 nodes: the command within 20 s there (issue 57's target)
AUTO_MCF_MIN_S = 12.0        # ... never less than this (fabrics that converge fast stop at the target gap anyway)
AUTO_MCF_MAX_S = 60.0        # ... nor more than this (the alltoall command's own Frank-Wolfe default is 55 s)
AUTO_MCF_NODES = 256         # from here the MCF is Frank-Wolfe under that limit; PDLP (exact to 1e-6) below


def auto_mcf(nodes: int, limit: float | None = None) -> tuple[float | None, str | None]:
    """The all-to-all LP's (time limit, method) for a design of ``nodes`` nodes: ``limit`` (the CLI's --mcf-time-limit) when
    given; from ``AUTO_MCF_NODES`` nodes Frank-Wolfe ("fw", ``alltoall_fw.py``) under a limit that grows with N,
    ``AUTO_MCF_LIMIT_S`` * N / 1024 within [``AUTO_MCF_MIN_S``, ``AUTO_MCF_MAX_S``]; below, PDLP (None: the
    solver's default) under its own. Measured on two shared cores (issue 57), ``train switch-c-2048 --parallel ep``
    on gkautz(4,N): PDLP took 5 s at N = 192, 25 s at 256 and 54 s at 512 (exact to 1e-6); under these limits
    the whole command takes 13 s at N = 256 and 512 and 16.5 s at 1024, with brackets of 0.6 %, 3.4 % and 2.2 %.
    An iteration costs ~N^2 log N, so the gap a limit leaves grows with N (gkautz(4,2048): 9 % after 60 s); the
    iteration's notes say so when the bracket is wider than 2 % (``solvers.training.pricing``)."""
    if nodes < AUTO_MCF_NODES:
        return limit, None
    if limit is None:
        limit = min(AUTO_MCF_MAX_S, max(AUTO_MCF_MIN_S, AUTO_MCF_LIMIT_S * nodes / 1024))
    return limit, "fw"
