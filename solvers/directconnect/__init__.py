"""The direct-connect paper's wing: Zhao et al., "Efficient Direct-Connect Topologies for Collective
Communications" (digest: shared notes direct-connect.md and direct-connect-appendix.md).

- ``bfb``: BFB allgather, LP (1) per receiver and step, solved exactly (section 5, Theorem 19), every receiver
  at once; ``bfb_assignment`` the exact solution of one such problem (Hall's condition, Dinkelbach over
  max-flows); ``bfb_problems`` the problems one at a time and the chunked BFB (App. E.2); ``bfb_timed`` for links
  with alpha (LP (14), App. E.3); ``bfb_lp`` the same LPs as Pyomo models.
- ``expansion``: line-graph, degree and Cartesian-power expansions of a base schedule (section 6, Theorems 10-16).
- ``base_table``, ``searched_schedules``, ``reconstruct_bases``: the bases the expansions start from (Table 5,
  App. D).
- ``finder``: the Pareto frontier of (steps, tb_factor) over expansion chains (section 7, Tables 4 and 7).
- ``selection``: the papers' step model of a candidate for a workload (Table 4; size mixes).
- ``pricing``: the runtime model of a candidate's verified schedule, what the Finder ranks by (up to 256 nodes).
- ``alltoall``, ``direct_alltoall``: the all-to-all multi-commodity-flow LP (3) and its direct schedule.
- ``allreduce_lp``: the allreduce LP (6) of App. E.

See docs/ARCHITECTURE.md.
"""
