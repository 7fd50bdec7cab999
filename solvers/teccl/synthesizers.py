"""TE-CCL's synthesizer: the time-expanded multi-commodity flow, as a MILP with copy or an LP without, for
every collective and custom demand matrices (TE-CCL sections 3-5, App. A-H)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.errors import NotApplicable
from ..core.schedule import Collective
from ..registry import SKIP_BUDGET, Built, Synthesizer, option, register
from . import AUTO_MILP_BINARIES, DEFAULT_TIME_LIMIT_S, collective_schedule, read_demand_matrix
from .instance import MAX_DEMAND_TEXT
from .switches import SWITCH_MODELS

COMPARE_MAX_NODES = 16               # TE-CCL's MILP grows as N^2 x links x epochs: small fabrics only in Compare
COMPARE_MAX_TIME_S = 20.0            # per TE-CCL solve in Compare (an allreduce is two)
COMPARE_MIN_TIME_S = 1.0             # less than this left of Compare's budget: TE-CCL is skipped


def parse_epoch(text: str):
    """``slowest``, ``fastest`` or an epoch length in microseconds."""
    if text in ("slowest", "fastest"):
        return text
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"--epoch takes slowest, fastest or microseconds, not {text!r}") from None


def parse_switch_buffer(text: str):
    """``none``, ``unlimited`` or a number of chunks."""
    if text in ("none", "unlimited"):
        return text
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--switch-buffer takes none, unlimited or a number of chunks, not {text!r}") from None
    if value < 0:
        raise ValueError(f"--switch-buffer must be at least 0 chunks, got {value}")
    return value


def read_demand_file(path: str) -> list[list[int]]:
    """The demand matrix in the CSV file at ``path`` (``read_demand_matrix``: at most ``MAX_DEMAND_TEXT``
    characters)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return read_demand_matrix(fh.read(MAX_DEMAND_TEXT + 1))
    except OSError as exc:
        raise ValueError(f"cannot read the demand file: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class TecclOptions:
    chunks: int = option(1, "chunks per GPU (allgather, reduce-scatter, allreduce) or per pair (alltoall)",
                         minimum=1, page_maximum=16, label="Chunks")
    epochs: int | None = option(None, "K epochs (default: the smallest K that admits a schedule, probes then a "
                                      "bisection)", minimum=1, page_maximum=10_000, label="Epochs K (0 = auto)")
    time_limit: float = option(DEFAULT_TIME_LIMIT_S, "seconds for all solves of one instance (each part of a "
                                                     "reduce-scatter or allreduce)", page_minimum=1.0,
                               maximum=24 * 3600, page_maximum=3600.0, step=5.0, key="limit",
                               label="Time limit (s)")
    gap: float = option(1e-4, "relative MIP gap at which a solve stops", minimum=0.0, maximum=0.99, step=1e-4,
                        label="Gap")
    method: str = option("auto", "auto: the LP for alltoall and demand matrices (coarser epochs past its size "
                                 "limit, see --multiplier); lp on allgather: no copy, each destination's copy "
                                 "routed on its own (TE-CCL Fig. 9); for allgather the MILP with copy up to "
                                 f"{AUTO_MILP_BINARIES:,} flow binaries, beyond that the greedy schedule in epochs "
                                 "and the MILP over the schedules the fabric's symmetries keep (its gap to the "
                                 "lower bound, cuts or LP relaxation, reported); astar: rounds of a few epochs, "
                                 "not optimal",
                         choices=("auto", "milp", "lp", "astar"), label="Method")
    epoch: str | Fraction = option("slowest", "epoch length: the chunk time of the slowest link (every link "
                                              "carries a chunk per epoch) or of the fastest (finer, larger "
                                              "models), or microseconds",
                                   choices=("slowest", "fastest"), key="policy", label="Epoch length",
                                   parse=parse_epoch)
    multiplier: int | None = option(None, "epoch multiplier m (the paper's EM, section 6 / Table 4): epochs m times "
                                          "longer, every link carrying m times the chunks per epoch, a model about "
                                          "m times smaller; default 1, or for the LP the smallest power of two "
                                          "that keeps it under its size limit", minimum=1, maximum=1024,
                                    page_maximum=64, label="Epoch multiplier (0 = auto)")
    switch_copy: bool = option(False, "switches copy (SHARP-like): they may duplicate a chunk onto several links",
                               label="Switches copy")
    switch_buffer: str | int = option("none", "chunks a switch may keep from one epoch to the next (TE-CCL App. B's "
                                              "buffer limit at switches): none (the paper's switch: what lands "
                                              "leaves in the same epoch), unlimited, or a number; MILP only",
                                      choices=("none", "unlimited"), minimum=0, parse=parse_switch_buffer,
                                      label="Switch buffer")
    switch_model: str = option("node", "node: a switch is a node without buffer (copying with --switch-copy); "
                                       "hyperedge: TE-CCL App. C, each switch replaced by GPU-to-GPU hyper-edges, "
                                       "one per GPU and direction per epoch (no copy); MILP only",
                               choices=SWITCH_MODELS, label="Switch model")
    matrix: tuple | None = option(None, "a demand matrix (CSV of chunk counts, one row per source GPU) for the "
                                        "custom collective", flag="--demand", metavar="FILE",
                                  parse=read_demand_file, widget="demand_matrix", key="demand")


@register
class Teccl(Synthesizer):
    name = "teccl"
    summary = "time-expanded multi-commodity flow (TE-CCL): MILP with copy, LP without; any demand"
    paper = "Liu et al., TE-CCL (SIGCOMM 2024), sections 3-5"
    rank = 90
    reports_progress = True
    collectives = frozenset(Collective.every())
    Options = TecclOptions

    @classmethod
    def uses_bytes(cls, topo):
        return True                                        # chunks are sized from M

    def build(self, topo, collective, options: TecclOptions, work) -> Built:
        kwargs = {"chunks": options.chunks, "epochs": options.epochs, "time_limit": options.time_limit,
                  "gap": options.gap, "method": options.method, "epoch": options.epoch,
                  "multiplier": options.multiplier, "switch_copy": options.switch_copy,
                  "switch_buffer": options.switch_buffer, "switch_model": options.switch_model}
        if options.matrix is not None:
            kwargs["matrix"] = [list(r) for r in options.matrix]
            del kwargs["chunks"]
        if work.total_bytes is not None:
            kwargs["buffer_bytes"] = work.total_bytes
        if collective.rooted:
            if options.matrix is not None:
                raise NotApplicable("--demand is for the custom collective, not a rooted one")
            from .rooted import rooted_schedule

            chunks = kwargs.pop("chunks")
            found, schedule = rooted_schedule(topo, collective, work.root, chunks, kwargs.pop("buffer_bytes", None),
                                              work.prefixed("teccl"), **kwargs)
            return Built(schedule, detail=found)
        found = collective_schedule(topo, collective, progress=work.prefixed("teccl"), **kwargs)
        return Built(found.schedule, detail=found)

    @classmethod
    def compare_plan(cls, topo, collective, left_s):
        if topo.n > COMPARE_MAX_NODES:
            return f"skipped: TE-CCL's MILP runs here up to {COMPARE_MAX_NODES} compute nodes, this has {topo.n}"
        limit = min(COMPARE_MAX_TIME_S, left_s / (2 if collective is Collective.ALLREDUCE else 1))
        return SKIP_BUDGET if limit < COMPARE_MIN_TIME_S else {"time_limit": limit}
