"""Small topologies and strategies shared by the tests."""
from fractions import Fraction
from itertools import combinations
from pathlib import Path

from hypothesis import strategies as st

from topologies.model import COMPUTE, SWITCH, Link, Topology


def star(gpus: int, bandwidth=1) -> Topology:
    """``gpus`` compute nodes around one switch, a link each way between each GPU and the switch."""
    names = tuple(f"g{i}" for i in range(gpus)) + ("sw",)
    kinds = (COMPUTE,) * gpus + (SWITCH,)
    links = []
    for i in range(gpus):
        links += [Link(i, gpus, Fraction(bandwidth)), Link(gpus, i, Fraction(bandwidth))]
    return Topology(names, kinds, tuple(links), name=f"star({gpus})")


@st.composite
def strongly_connected_topologies(draw, max_nodes=9, switches=True):
    """A random strongly connected multigraph: a random Hamiltonian cycle plus random extra links, optionally
    with switches spliced into some links."""
    n = draw(st.integers(2, max_nodes))
    order = draw(st.permutations(range(n)))
    edges = [(order[i], order[(i + 1) % n]) for i in range(n)]
    edges += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n))
    k = draw(st.integers(0, 2)) if switches else 0
    names = [str(i) for i in range(n)] + [f"s{j}" for j in range(k)]
    kinds = [COMPUTE] * n + [SWITCH] * k
    bws = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=len(edges), max_size=len(edges)))
    links = []
    for (s, d), bw in zip(edges, bws):
        via = draw(st.integers(-1, k - 1)) if k else -1
        if via >= 0 and s != d:
            links += [Link(s, n + via, Fraction(bw)), Link(n + via, d, Fraction(bw))]
        else:
            links.append(Link(s, d, Fraction(bw)))
    return Topology(tuple(names), tuple(kinds), tuple(links), name="random")


def compute_cuts(topo: Topology):
    """(compute nodes inside, bandwidth leaving) for every node set S, switches included, that holds some but not
    all compute nodes: the cuts of ForestColl's bound (1). Exponential: small topologies only."""
    compute = set(topo.compute_nodes)
    for r in range(1, topo.num_nodes):
        for side in combinations(range(topo.num_nodes), r):
            side = set(side)
            inside = len(compute & side)
            if 0 < inside < len(compute):
                yield inside, sum((l.bandwidth for l in topo.links if l.src in side and l.dst not in side),
                                  Fraction(0))


def chromium_present() -> bool:
    """Whether Debian's chromium (what kaleido and the browser tests drive) is on this machine."""
    import os
    import shutil

    return bool(shutil.which("chromium") or os.path.exists(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")))


class Stop(BaseException):
    """Stands in for Streamlit's StopException/RerunException (BaseExceptions raised out of an st call)."""


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")
