"""Everything that builds or reads a topology: the model, graph families, the expression language, file I/O."""
from .model import COMPUTE, SWITCH, Link, Topology, TopologyError
from .expression import ExpressionError, parse_topology
from .files import load, read_topology, write_topology
from .properties import diameter, summarize

__all__ = ["COMPUTE", "SWITCH", "Link", "Topology", "TopologyError", "ExpressionError", "parse_topology",
           "load", "read_topology", "write_topology", "diameter", "summarize"]
