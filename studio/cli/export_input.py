"""What an export command exports: the design, collective and synthesizer on its command line, synthesized (and
verified, by the registry) under its workload; shared by the MSCCL, bundle, plan, graph and Chakra exports."""
from __future__ import annotations

from solvers import Collective, synthesize
from topologies import load

from .common import UsageError
from .synth_flags import options_for


def root_of(args, collective: Collective):
    """``--root`` for a rooted collective (default rank 0); UsageError when given for any other."""
    root = getattr(args, "root", None)
    if root is not None and not collective.rooted:
        raise UsageError(f"--root goes with broadcast, reduce, gather or scatter, not {collective.value}")
    return root


def schedule_for_export(args, work):
    """(result, the file's name, the call placement asked for) of an export command; ``work``: its workload, whose M
    the synthesizers that depend on it are told."""
    topo = load(args.expr, max_nodes=args.max_nodes)
    collective = Collective.parse(args.collective)
    result = synthesize(topo, args.algo, collective, options=options_for(args, args.algo),
                        root=root_of(args, collective), total_bytes=work.total_bytes)
    name = f"{args.algo} {result.schedule.collective.value} {topo.name or topo.expr}"
    return result, name, {"default": None, "in": True, "out": False}[args.place]
