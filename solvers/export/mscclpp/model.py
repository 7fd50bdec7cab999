"""What the plan checker produces and works on: ``PlanReport`` (what ``check_plan`` returns) and the model of a
plan that passed the structural rules (``_Ref``, ``_Op``, ``_Model``), which ``reader.py`` and ``op_rules.py``
build and ``simulate.py`` runs."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PlanReport:
    """What ``check_plan`` found. ``threadblocks[r]`` is rank r's threadblock count and
    ``ops_per_threadblock[r][t]`` the ops of its threadblock t (as far as the plan could be read)."""

    ok: bool
    problems: list[str]
    ngpus: int = 0
    threadblocks: list[int] = field(default_factory=list)
    ops_per_threadblock: list[list[int]] = field(default_factory=list)

    @property
    def first(self) -> str:
        return self.problems[0] if self.problems else "ok"

    @property
    def max_threadblocks(self) -> int:
        return max(self.threadblocks, default=0)

    @property
    def max_ops(self) -> int:
        return max((n for tbs in self.ops_per_threadblock for n in tbs), default=0)


@dataclass
class _Ref:
    rank: int
    buf: str
    index: int
    size: int
    remote: bool


@dataclass
class _Op:
    name: str
    where: str
    chans: list = field(default_factory=list)        # the rank's channel indices of the op's type
    ctype: str = ""
    srcs: list = field(default_factory=list)
    dsts: list = field(default_factory=list)
    sems: list = field(default_factory=list)
    barrier: tuple | None = None
    unsupported: str = ""


@dataclass
class _Model:
    n: int
    coll: str
    in_place: bool
    chunks: list            # per rank: {"i": .., "o": .., "s": ..}
    chans: list             # per rank: {ctype: [peer, ...]}
    sem_init: list          # per rank: [init values]
    tbs: list               # per rank: [[_Op, ...], ...]
