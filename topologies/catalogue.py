"""The base topologies the studio offers ready-made: Table 9's families at small sizes, the Table 8
distance-regular graphs and the reconstructed Diamond and DBJMod graphs (direct-connect paper App. F, H).

Each entry is an expression of the expression language and a one-line description; the expansion schedules
(``solvers.directconnect.expansion``) start from these, and the tests run every single expansion on every base of up to 16
nodes.
"""
from __future__ import annotations

BASES: dict[str, str] = {
    "complete(3)": "K_3, Moore- and BW-optimal, 1 step",
    "complete(4)": "K_4",
    "complete(5)": "K_5, Table 5's best d=4 topology at N=5",
    "bipartite(2)": "K_{2,2} of Fig. 1",
    "bipartite(3)": "K_{3,3}",
    "bipartite(4)": "K_{4,4}, Table 5 at N=8",
    "hamming(2,3)": "H(2,3) = K_3^{□2} ≅ Paley P9, Table 5 at N=9",
    "hypercube(3)": "Q_3",
    "hypercube(4)": "Q_4 = H(4,2), Table 8",
    "kautz(2,1)": "K(2,1): Kautz words of length 2, 6 nodes",
    "kautz(3,1)": "K(3,1), 12 nodes",
    "kautz(2,2)": "K(2,2), 12 nodes, Moore optimal",
    "gkautz(2,5)": "Π_{2,5}: generalized Kautz with self-loops",
    "gkautz(3,10)": "Π_{3,10}",
    "gkautz(4,16)": "Π_{4,16}",
    "debruijn(2,3)": "DBJ(2,3): self-loops at 000 and 111",
    "debruijn(2,4)": "DBJ(2,4)",
    "debruijn(4,2)": "DBJ(4,2)",
    "circulant(7,[2,3])": "C(7,{2,3}), Table 5 at N=7",
    "circulant(8,[2,3])": "C(8,{2,3})",
    "circulant(11,[2,3])": "C(11,{2,3}), Table 5 at N=11",
    "circulant(12,[2,3])": "C(12,{2,3}), Table 5 at N=12",
    "circulant(16,[3,4])": "C(16,{3,4}), base of L^3(C(16,{3,4})) in Table 4",
    "dcirculant(2)": "directed circulant, degree 2 on 4 nodes",
    "dcirculant(4)": "directed circulant, degree 4 on 6 nodes (Fig. 3)",
    "uniring(1,4)": "UniRing(1,4) of Fig. 4",
    "uniring(2,5)": "UniRing(2,5): double links",
    "biring(2,5)": "BiRing(2,5)",
    "biring(4,6)": "BiRing(4,6): double links",
    "torus(3,3)": "3x3 torus",
    "torus(4,4)": "4x4 torus",
    "twisted_torus(2,4)": "2x4 twisted torus",
    "octahedron()": "J(4,2), Table 8",
    "paley(9)": "Paley P9, Table 8",
    "crown(5)": "K_{5,5} minus a perfect matching, Table 8",
    "heawood_distance3()": "distance-3 graph of the Heawood graph, Table 8",
    "petersen_line()": "line graph of the Petersen graph, Table 8",
    "diamond()": "Diamond, N=8, d=2 (reconstruction)",
    "dbjmod(2,3)": "DBJMod(2,3) (reconstruction)",
    "dbjmod(2,4)": "DBJMod(2,4) (reconstruction)",
    "dbjmod(3,2)": "DBJMod(3,2) (reconstruction)",
    "dbjmod(4,2)": "DBJMod(4,2) (reconstruction)",
    "pg23()": "incidence graph of PG(2,3), Table 8",
    "odd_graph(4)": "odd graph O_4, Table 8",
    "ag24()": "incidence graph of AG(2,4) minus a parallel class, Table 8",
    "gq33()": "incidence graph of GQ(3,3), Table 8",
}
