"""TACOS's synthesizer: greedy link-chunk matching over the time-expanded network, switches unwound (TACOS
sections IV-VII)."""
from __future__ import annotations

from dataclasses import dataclass

from ..registry import Built, Synthesizer, option, register
from . import DEFAULT_RESTARTS, tacos


def parse_unwind(text: str):
    """``auto``, ``max`` or a positive integer degree."""
    value = str(text).strip().lower()
    if value in ("auto", "max"):
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise ValueError(f"--unwind takes auto, max or a positive integer, not {text!r}")


@dataclass(frozen=True)
class TacosOptions:
    chunks: int = option(1, "k: chunks per NPU; each NPU's shard is cut into k chunks that travel separately "
                            "(pipelining)", minimum=1, page_maximum=16, label="Chunks per NPU")
    restarts: int = option(DEFAULT_RESTARTS, "seeded greedy runs, the best kept (they stop once one meets the "
                                             "ingress bound)", minimum=1, page_maximum=64, label="Restarts")
    seed: int = option(0, "the first run's seed", minimum=0, page_maximum=1_000_000, label="Seed")
    unwind_degree: int | str = option(
        "auto", "switch unwinding degree: auto (a one-switch domain becomes a full mesh, a multi-switch one a ring, "
                "TACOS section VII-B), max (full mesh) or d (degree-d links at bandwidth/d)",
        choices=("auto", "max", "1", "2", "4"), flag="--unwind", key="unwind", label="Switch unwinding",
        parse=parse_unwind)


@register
class Tacos(Synthesizer):
    name = "tacos"
    summary = "TACOS greedy link-chunk matching over the time-expanded network; switches unwound"
    paper = "Won et al., TACOS, sections IV-VII"
    rank = 70
    reports_progress = True
    Options = TacosOptions

    @classmethod
    def uses_bytes(cls, topo):
        return True                                        # chunks are sized from M

    def build(self, topo, collective, options: TacosOptions, work) -> Built:
        unwind = options.unwind_degree
        found = tacos(topo, collective, chunks=options.chunks, buffer_bytes=work.total_bytes,
                      restarts=options.restarts, seed=options.seed,
                      unwind_degree=int(unwind) if str(unwind).isdigit() else unwind, progress=work.progress)
        return Built(found.schedule, topology=found.topology, detail=found)
