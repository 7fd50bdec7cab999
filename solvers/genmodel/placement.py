"""GenTree's basic ReduceScatter placement (GenModel paper §4.2, Algorithm 1; digest §2.3).

The vector of every server is cut into N blocks (N = servers in the tree). After the switch-local ReduceScatter
at switch A, each of the n servers under A owns floor(N/n) or ceil(N/n) blocks, reduced over A's subtree, and every
block is owned by exactly one server under A. A server (a leaf) "owns" all N blocks of its own data.

Algorithm 1, read literally: children in order, their servers in order, the first N mod n servers take one block
more, and each server takes, among the blocks it already holds a partial of (owns in its child), the first ones
not yet taken. This can leave blocks unowned: with children of 2 and 5 servers and N = 7, server 4's only block
was taken by server 1 and block 3 is never taken; there no assignment from held blocks exists at all (digest §2.3).

``place`` therefore (1) runs the literal greedy, (2) completes it with augmenting paths -- a maximum b-matching
between servers (capacity as in the greedy) and blocks over the held-partial edges -- and (3) gives any block still
unowned to a server with spare capacity that holds no partial of it (it then receives every partial). Every switch's
placement is checked: each block owned once, each server within its capacity.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .tree import Node, SwitchTree


@dataclass
class SwitchPlacement:
    """Placement at one switch. ``owner[b]`` is the server (global index) that owns block b after the switch's
    ReduceScatter; ``holders[b]`` lists, one per child, the server that owns b in that child (its partial copy);
    ``owned[s]`` are the blocks of server s; ``unheld`` the blocks given to a server without a partial of them."""

    switch: str
    owner: list[int]
    holders: list[list[int]]
    owned: dict[int, list[int]]
    unheld: list[int] = field(default_factory=list)
    greedy_complete: bool = True


def capacities(servers: list[int], blocks: int) -> dict[int, int]:
    """floor(N/n) blocks each, one more for the first N mod n servers (Algorithm 1)."""
    n = len(servers)
    base, extra = divmod(blocks, n)
    return {s: base + (1 if i < extra else 0) for i, s in enumerate(servers)}


def _augment(b: int, holds: dict[int, list[int]], owner: list[int], load: dict[int, int], cap: dict[int, int],
             assigned: dict[int, list[int]]) -> bool:
    """Find an alternating path from unowned block b to a server with spare capacity (BFS) and apply it."""
    prev: dict[int, tuple[int, int | None]] = {}     # server -> (block it would take, block it gives up's origin)
    queue = deque()
    for s in holds[b]:
        if s not in prev:
            prev[s] = (b, None)
            queue.append(s)
    while queue:
        s = queue.popleft()
        if load[s] < cap[s]:
            load[s] += 1                              # the end of the path takes one block more; the rest swap
            # walk back: s takes block prev[s][0]; that block's former owner takes the block before it, ...
            while True:
                blk, from_server = prev[s]
                old = owner[blk]
                owner[blk] = s
                assigned[s].append(blk)
                if old is not None and old >= 0:
                    assigned[old].remove(blk)
                if from_server is None:
                    break
                s = from_server
            return True
        for blk in assigned[s]:
            for t in holds[blk]:
                if t not in prev:
                    prev[t] = (blk, s)
                    queue.append(t)
    return False


def _check(sp: SwitchPlacement, servers: list[int], cap: dict[int, int], blocks: int) -> None:
    assert all(o is not None and o >= 0 for o in sp.owner), f"switch {sp.switch}: a block has no owner"
    counted = sorted(b for s in servers for b in sp.owned[s])
    assert counted == list(range(blocks)), f"switch {sp.switch}: blocks not owned exactly once"
    for s in servers:
        assert len(sp.owned[s]) == cap[s], f"switch {sp.switch}: server {s} owns {len(sp.owned[s])} != {cap[s]}"
        assert all(sp.owner[b] == s for b in sp.owned[s])


def place_switch(name: str, children_owned: list[dict[int, list[int]]], blocks: int) -> SwitchPlacement:
    """The placement at a switch whose children end with ``children_owned[i]`` (server -> blocks it owns in child
    i, servers in order)."""
    servers = [s for owned in children_owned for s in owned]
    cap = capacities(servers, blocks)
    holds: dict[int, list[int]] = {b: [] for b in range(blocks)}
    held_by: dict[int, set[int]] = {}
    holders = [[-1] * len(children_owned) for _ in range(blocks)]
    for i, owned in enumerate(children_owned):
        for s, bl in owned.items():
            held_by[s] = set(bl)
            for b in bl:
                holds[b].append(s)
                holders[b][i] = s
    owner: list = [None] * blocks
    assigned: dict[int, list[int]] = {s: [] for s in servers}
    load = {s: 0 for s in servers}
    for owned in children_owned:                     # Algorithm 1, literally
        for s, bl in owned.items():
            for b in bl:
                if load[s] == cap[s]:
                    break
                if owner[b] is None:
                    owner[b] = s
                    assigned[s].append(b)
                    load[s] += 1
    greedy = all(o is not None for o in owner)
    for b in range(blocks):                          # complete with augmenting paths over held partials
        if owner[b] is None:
            _augment(b, holds, owner, load, cap, assigned)
    unheld = []
    for b in range(blocks):                          # last resort: a server without a partial of b
        if owner[b] is None:
            s = next(s for s in servers if load[s] < cap[s])
            owner[b] = s
            assigned[s].append(b)
            load[s] += 1
            unheld.append(b)
    owned = {s: sorted(assigned[s]) for s in servers}
    sp = SwitchPlacement(name, owner, holders, owned, unheld, greedy)
    _check(sp, servers, cap, blocks)
    for b in range(blocks):
        assert (owner[b] in held_by and b in held_by[owner[b]]) or b in unheld
    return sp


def place(tree: SwitchTree) -> dict[str, SwitchPlacement]:
    """The placement at every switch of ``tree`` (bottom-up), keyed by switch name."""
    blocks = tree.n
    index = {name: i for i, name in enumerate(tree.server_names)}
    final: dict[str, dict[int, list[int]]] = {}
    out: dict[str, SwitchPlacement] = {}

    def owned_by(v: Node) -> dict[int, list[int]]:
        return {index[v.name]: list(range(blocks))} if v.is_server else final[v.name]

    for sw in tree.switches:                          # post-order
        sp = place_switch(sw.name, [owned_by(c) for c in sw.children], blocks)
        out[sw.name] = sp
        final[sw.name] = sp.owned
    return out
