"""``allreduce-lp``: ForestColl's allreduce linear program (App. E, LP (6); ``solvers.directconnect.allreduce_lp``)
on a design, beside reduce-scatter + allgather.

The LP lets every GPU root its own share x_v of the allreduce and splits every link's bandwidth between the
reduce in-trees and the broadcast out-trees; its optimum sum_v x_v is the best allreduce rate any such tree
schedule reaches (the allreduce of M bytes takes M / sum x). RS+AG, what ForestColl builds, is the point where
every GPU roots an equal share and each link gives half to each phase: N x* / 2, with 1/x* the allgather cut
bound (ForestColl eq. (1), ``solvers.forestcoll.search.optimal_ratio``). The paper found the LP never above
RS+AG on the fabrics it tried; a rate above it marks a fabric where a different choice of roots pays.

``lp_report`` is shared with the Clusters page (its "Allreduce LP" view)."""
from __future__ import annotations

from fractions import Fraction

from .common import UsageError, cache_parent, design_parent, json_parent, json_text, print_table

ROUTING_HELP = ("how the LP routes the logical links through switches: source (one flow per source GPU; the same "
                "optimum, fewer variables, the default) or pair (one flow per GPU pair, as the paper writes it)")


def add_parser(sub) -> None:
    lp = sub.add_parser("allreduce-lp", parents=[design_parent(), json_parent(), cache_parent()],
                        help="ForestColl's allreduce LP (App. E): the best allreduce rate with every GPU's root "
                             "share, beside reduce-scatter + allgather's N x*/2")
    lp.add_argument("--time-limit", type=float, default=None, metavar="S",
                    help="seconds HiGHS may take (default 120); an LP stopped by it ends in one line")
    lp.add_argument("--routing", default="source", choices=["source", "pair"], help=ROUTING_HELP)


def rs_ag_rate(topo) -> Fraction:
    """N x* / 2 (GB/s): reduce-scatter then allgather at the allgather cut bound, each phase moving M / N per
    GPU at x* (ForestColl section 4.6; what ``forestcoll``'s allreduce reaches)."""
    from solvers.forestcoll.search import fabric, optimal_ratio

    fab = fabric(topo)
    return topo.n / (optimal_ratio(fab).ratio * fab.scale) / 2


def lp_report(topo, time_limit: float | None = None, routing: str = "source") -> dict:
    """The LP's optimum with the root shares (x_v / sum x, by GPU name), RS+AG's rate and their ratio. A model
    over ``MAX_VARIABLES``, a fabric the LP does not take and a solve stopped by the time limit each raise
    NotApplicable with one line."""
    from solvers.core.errors import NotApplicable
    from solvers.directconnect.allreduce_lp import LP_TIME_LIMIT_S, allreduce_lp, model_size

    limit = LP_TIME_LIMIT_S if time_limit is None else time_limit
    if not limit > 0:
        raise UsageError("--time-limit must be a positive number of seconds")
    try:
        lp = allreduce_lp(topo, time_limit=limit, routing=routing)
    except NotApplicable as exc:
        text = str(exc)
        if "TimeLimit" in text or "maxTime" in text:
            raise NotApplicable(f"the allreduce LP ({model_size(topo, routing):,} variables) found no optimum "
                                f"within its time limit of {limit:g} s; give it more with --time-limit") from None
        raise
    rs_ag = rs_ag_rate(topo)
    total = lp.total_rate
    shares = {name: (max(x, 0.0) / total + 0.0 if total > 0 else 0.0) for name, x in lp.x.items()}
    return {"topology": topo.expr or topo.name, "gpus": topo.n, "lp_rate_GBps": total,
            "rs_ag_rate_GBps": float(rs_ag), "rs_ag_rate_exact": str(rs_ag), "lp_over_rs_ag": total / float(rs_ag),
            "roots": sum(1 for s in shares.values() if s > 1e-9), "root_shares": shares,
            "status": lp.status, "variables": lp.variables, "constraints": lp.constraints,
            "switched": lp.switched, "routing": routing, "seconds": round(lp.seconds, 3)}


def run(args) -> int:
    from topologies import load

    out = lp_report(load(args.expr, max_nodes=args.max_nodes), args.time_limit, args.routing)
    if args.json:
        print(json_text(out))
        return 0
    shares = out.pop("root_shares")
    print_table(out)
    print("root shares (x_v / sum x; the LP's optimum need not be unique):")
    for name, share in shares.items():
        print(f"  {name:<16} {share:.4f}")
    return 0


COMMANDS = {"allreduce-lp": run}
