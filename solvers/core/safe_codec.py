"""Results as data only: a whitelisting encoding for the results cache (issue 39).

``Codec(types)`` turns a value into a JSON tree and a set of named numpy arrays, and back. What it encodes:
None, bool, int, str, float (inf and nan tagged), ``Fraction`` (an exact "num/den" string), tuples, lists, dicts
(keys encoded the same way), numpy arrays of booleans, integers or floats (stored as arrays, never as objects),
arrays of Python integers (decimal strings: a ``Columns.bounds`` table), numpy scalars (as the Python number),
and the registered types: dataclasses and enums named by the tag they were registered under, ``Schedule`` and
``Topology`` (the IR's own layout: the schedule's columns as arrays, its bounds as exact integers, a list of
transfers as columns with lo/hi as positions in a table of exact Fractions; a topology's links as arrays with
bandwidth and alpha in a table of exact Fractions). A schedule or topology met twice is written once and referred
to after; the caller may name objects both sides already hold (``refs``: the topology a request was made for).

Anything else refuses to encode (``CodecError``), and a tree that names a type not registered, has a key or
field the type does not have, or holds a value of the wrong kind refuses to decode. Decoding never imports
anything and builds only the registered types, through their constructors (which check what they check).
"""
from __future__ import annotations

import dataclasses
import math
import re
from enum import Enum
from fractions import Fraction
from typing import Any, Iterable

import numpy as np

from topologies.model import Link, Topology

from .schedule import COLUMN_FIELDS, Collective, Columns, Schedule, Transfer

__all__ = ["Codec", "CodecError"]

MAX_DEPTH = 64                       # nesting of containers and dataclasses, both ways
_ARRAY_KINDS = "biuf"                # numpy dtypes kept as arrays: bool, signed, unsigned, float
_FRACTION = re.compile(r"-?[0-9]{1,4000}/[0-9]{1,4000}")
_INTEGER = re.compile(r"-?[0-9]{1,4000}")
_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class CodecError(ValueError):
    """A value the codec does not encode, or a tree it does not accept."""


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _fraction(text: Any) -> Fraction:
    if type(text) is not str or not _FRACTION.fullmatch(text):
        raise CodecError("a fraction is written num/den")
    num, den = text.split("/")
    if int(den) <= 0:
        raise CodecError("a fraction's denominator is positive")
    return Fraction(int(num), int(den))


def _integer(text: Any) -> int:
    if type(text) is not str or not _INTEGER.fullmatch(text):
        raise CodecError("an integer is written in decimal")
    return int(text)


def _fraction_table(values) -> tuple[list[str], np.ndarray]:
    """(the distinct exact Fractions among ``values`` as num/den strings, each value's position among them)."""
    index: dict[Fraction, int] = {}
    positions = []
    for v in values:
        if type(v) is not Fraction:
            raise CodecError(f"an exact Fraction was expected, not {type(v).__name__}")
        positions.append(index.setdefault(v, len(index)))
    return [_fraction_text(v) for v in index], np.array(positions, dtype=np.int64)


class Codec:
    """The registered ``types`` (dataclasses and enums, each under its ``__qualname__`` unless a name is given
    with ``register``); ``Collective`` is always registered."""

    def __init__(self, types: Iterable[type] = ()):
        self._by_name: dict[str, type] = {}
        self._name_of: dict[type, str] = {}
        self.register(Collective)
        for cls in types:
            self.register(cls)

    def register(self, cls: type, name: str | None = None) -> None:
        if not (isinstance(cls, type) and (dataclasses.is_dataclass(cls) or issubclass(cls, Enum))):
            raise TypeError(f"{cls!r} is neither a dataclass nor an enum")
        name = name or cls.__qualname__
        if self._by_name.get(name, cls) is not cls:
            raise TypeError(f"two types registered as {name!r}")
        self._by_name[name] = cls
        self._name_of[cls] = name

    def names(self) -> dict[str, type]:
        return dict(self._by_name)

    def encode(self, value: Any, refs: dict[str, Any] | None = None) -> tuple[Any, dict[str, np.ndarray]]:
        """(the JSON tree, the arrays it names) of ``value``; ``refs``: objects the decoder is given as well."""
        packer = _Packer(self, refs or {})
        return packer.pack(value, 0), packer.arrays

    def decode(self, tree: Any, arrays: dict[str, np.ndarray], refs: dict[str, Any] | None = None) -> Any:
        """The value ``encode`` was given; CodecError for anything this codec would not have written."""
        try:
            return _Unpacker(self, arrays, refs or {}).unpack(tree, 0)
        except CodecError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as exc:
            raise CodecError(f"{type(exc).__name__}: {exc}") from None


class _Packer:
    def __init__(self, codec: Codec, refs: dict[str, Any]):
        self.codec = codec
        self.arrays: dict[str, np.ndarray] = {}
        self._named = {id(obj): name for name, obj in refs.items()}
        self._keep = list(refs.values())       # the ids above stay valid while packing

    def array(self, a: np.ndarray) -> dict:
        name = f"a{len(self.arrays)}"
        self.arrays[name] = np.ascontiguousarray(a)
        return {"$array": name}

    def named(self, obj: Any, prefix: str) -> tuple[str, bool]:
        """(the reference name of ``obj``, whether it is new)."""
        known = self._named.get(id(obj))
        if known is not None:
            return known, False
        name = f"{prefix}{len(self._named)}"
        self._named[id(obj)] = name
        self._keep.append(obj)
        return name, True

    def pack(self, v: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CodecError("nested too deeply")
        t = type(v)
        if v is None or t is bool or t is int or t is str:
            return v
        if t is float:
            return v if math.isfinite(v) else {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if t is Fraction:
            return {"$fraction": _fraction_text(v)}
        if isinstance(v, (np.bool_, np.integer, np.floating)):
            return self.pack(v.item(), depth)
        d = depth + 1
        if t is list:
            return [self.pack(x, d) for x in v]
        if t is tuple:
            return {"$tuple": [self.pack(x, d) for x in v]}
        if t is dict:
            return {"$dict": [[self.pack(k, d), self.pack(x, d)] for k, x in v.items()]}
        if t is np.ndarray:
            if v.dtype.kind in _ARRAY_KINDS:
                return self.array(v)
            if v.dtype == object and v.ndim == 1 and all(type(x) is int for x in v.tolist()):
                return {"$ints": [str(x) for x in v.tolist()]}
            raise CodecError(f"a numpy array of {v.dtype} is not kept")
        if t is Schedule:
            return self.schedule(v, d)
        if t is Topology:
            return self.topology(v)
        name = self.codec._name_of.get(t)
        if name is None:
            raise CodecError(f"{t.__module__}.{t.__qualname__} is not a registered type")
        if isinstance(v, Enum):
            return {"$enum": name, "value": self.pack(v.value, d)}
        return {"$type": name, "fields": {f.name: self.pack(getattr(v, f.name), d)
                                          for f in dataclasses.fields(v) if f.init}}

    def schedule(self, s: Schedule, depth: int) -> dict:
        name, new = self.named(s, "s")
        if not new:
            return {"$ref": name}
        out = {"collective": s.collective.value, "algo": s.algo, "notes": self.pack(s.notes, depth),
               "demand": None if s.demand is None else self.pack([tuple(e) for e in s.demand], depth),
               "root": s.root, "group": None if s.group is None else list(s.group)}
        cols = s.stored_columns()
        if cols is not None:
            for f in COLUMN_FIELDS:
                a = getattr(cols, f)
                if a.dtype.kind not in "biu":
                    raise CodecError(f"a schedule column of {a.dtype} is not kept")
            out["columns"] = {**{f: self.array(getattr(cols, f)) for f in COLUMN_FIELDS}, "one": str(int(cols.one)),
                              "bounds": None if cols.bounds is None else self.pack(cols.bounds, depth)}
        else:
            transfers = s.transfers
            table, positions = _fraction_table(x for t in transfers for x in (t.lo, t.hi))
            count = len(transfers)
            out["transfers"] = {
                "shard": self.array(np.fromiter((t.shard for t in transfers), np.int64, count)),
                "link": self.array(np.fromiter((t.link for t in transfers), np.int64, count)),
                "step": self.array(np.fromiter((t.step for t in transfers), np.int64, count)),
                "reduce": self.array(np.fromiter((bool(t.reduce) for t in transfers), bool, count)),
                "lo": self.array(positions[0::2]), "hi": self.array(positions[1::2]), "values": table}
        return {"$schedule": out, "$id": name}

    def topology(self, topo: Topology) -> dict:
        name, new = self.named(topo, "t")
        if not new:
            return {"$ref": name}
        links = topo.links
        table, positions = _fraction_table(x for l in links for x in (l.bandwidth, l.alpha))
        count = len(links)
        return {"$topology": {
            "names": list(topo.names), "kinds": list(topo.kinds), "name": topo.name, "expr": topo.expr,
            "src": self.array(np.fromiter((l.src for l in links), np.int64, count)),
            "dst": self.array(np.fromiter((l.dst for l in links), np.int64, count)),
            "bandwidth": self.array(positions[0::2]), "alpha": self.array(positions[1::2]), "values": table},
            "$id": name}


def _keys(node: dict, *expected: str) -> None:
    if set(node) != set(expected):
        raise CodecError(f"unexpected keys {sorted(node)}")


class _Unpacker:
    def __init__(self, codec: Codec, arrays: dict[str, np.ndarray], refs: dict[str, Any]):
        self.codec = codec
        self.arrays = arrays
        self.refs = dict(refs)

    def array(self, node: Any, kinds: str = _ARRAY_KINDS, length: int | None = None) -> np.ndarray:
        if type(node) is not dict:
            raise CodecError("an array was expected")
        _keys(node, "$array")
        a = self.arrays.get(node["$array"]) if type(node["$array"]) is str else None
        if type(a) is not np.ndarray or a.dtype.kind not in kinds:
            raise CodecError("an array of the wrong kind, or none")
        if length is not None and a.shape != (length,):
            raise CodecError("a column of the wrong length")
        return a

    def text(self, node: Any) -> str:
        if type(node) is not str:
            raise CodecError("a string was expected")
        return node

    def positions(self, node: Any, length: int, size: int) -> list[int]:
        a = self.array(node, "iu", length)
        if length and (int(a.min()) < 0 or int(a.max()) >= size):
            raise CodecError("a position outside its table")
        return a.tolist()

    def unpack(self, node: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CodecError("nested too deeply")
        t = type(node)
        if node is None or t is bool or t is int or t is str or t is float:
            return node
        d = depth + 1
        if t is list:
            return [self.unpack(x, d) for x in node]
        if t is not dict or not node:
            raise CodecError(f"an unexpected {t.__name__}")
        tag = next(iter(node))
        if tag == "$float":
            _keys(node, tag)
            if node[tag] not in _FLOATS:
                raise CodecError("an unknown float")
            return _FLOATS[node[tag]]
        if tag == "$fraction":
            _keys(node, tag)
            return _fraction(node[tag])
        if tag in ("$tuple", "$dict", "$ints") and type(node[tag]) is not list:
            raise CodecError(f"{tag} holds a list")
        if tag == "$tuple":
            _keys(node, tag)
            return tuple(self.unpack(x, d) for x in node[tag])
        if tag == "$dict":
            _keys(node, tag)
            out = {}
            for pair in node[tag]:
                if type(pair) is not list or len(pair) != 2:
                    raise CodecError("a dict item is a [key, value] pair")
                key = self.unpack(pair[0], d)
                hash(key)                               # TypeError for an unhashable key
                out[key] = self.unpack(pair[1], d)
            return out
        if tag == "$array":
            return self.array(node)
        if tag == "$ints":
            _keys(node, tag)
            return np.array([_integer(x) for x in node[tag]], dtype=object)
        if tag == "$ref":
            _keys(node, tag)
            if type(node[tag]) is not str or node[tag] not in self.refs:
                raise CodecError("a reference to nothing")
            return self.refs[node[tag]]
        if tag == "$schedule":
            return self.schedule(node, d)
        if tag == "$topology":
            return self.topology(node)
        if tag in ("$enum", "$type"):
            cls = self.codec._by_name.get(node[tag]) if type(node[tag]) is str else None
            if cls is None:
                raise CodecError(f"{node[tag]!r} is not a registered type")
            if tag == "$enum":
                _keys(node, tag, "value")
                if not issubclass(cls, Enum):
                    raise CodecError(f"{node[tag]} is not an enum")
                return cls(self.unpack(node["value"], d))
            _keys(node, tag, "fields")
            if not dataclasses.is_dataclass(cls) or type(node["fields"]) is not dict:
                raise CodecError(f"{node[tag]} is not a dataclass")
            init = {f.name for f in dataclasses.fields(cls) if f.init}
            if set(node["fields"]) != init:
                raise CodecError(f"{node[tag]} has other fields")
            return cls(**{k: self.unpack(v, d) for k, v in node["fields"].items()})
        raise CodecError(f"an unknown tag {tag!r}")

    def define(self, node: dict, value: Any) -> Any:
        name = node["$id"]
        if type(name) is not str or name in self.refs:
            raise CodecError("a reference defined twice")
        self.refs[name] = value
        return value

    def schedule(self, node: dict, depth: int) -> Schedule:
        _keys(node, "$schedule", "$id")
        body = node["$schedule"]
        if type(body) is not dict:
            raise CodecError("a schedule is a dict")
        _keys(body, "collective", "algo", "notes", "demand", "root", "group",
              "columns" if "columns" in body else "transfers")
        collective = Collective(self.text(body["collective"]))
        root = body["root"]
        if (root is not None and (type(root) is not int or root < 0)) or collective.rooted != (root is not None):
            raise CodecError("a schedule's root is a node index, given for a rooted collective only")
        group = body["group"]
        if group is not None and (type(group) is not list or not all(type(v) is int and v >= 0 for v in group)
                                  or collective in (Collective.ALLTOALL, Collective.CUSTOM)):
            raise CodecError("a schedule's group is a list of node indices")
        notes = self.unpack(body["notes"], depth)
        if type(notes) is not dict:
            raise CodecError("a schedule's notes are a dict")
        demand = None if body["demand"] is None else self.unpack(body["demand"], depth)
        if "columns" in body:
            c = body["columns"]
            if type(c) is not dict:
                raise CodecError("columns are a dict")
            _keys(c, *COLUMN_FIELDS, "one", "bounds")
            step = self.array(c["step"], "iu")
            if step.ndim != 1:
                raise CodecError("a column is one-dimensional")
            arrays = {f: self.array(c[f], "b" if f == "reduce" else "iu", len(step)) for f in COLUMN_FIELDS}
            one = _integer(c["one"])
            bounds = None if c["bounds"] is None else self.unpack(c["bounds"], depth)
            if one < 1 or (bounds is not None and (type(bounds) is not np.ndarray or bounds.dtype != object)):
                raise CodecError("a schedule's scale or bounds table is malformed")
            schedule = Schedule(collective, algo=self.text(body["algo"]), notes=notes, demand=demand, root=root,
                                group=group, cols=Columns(**arrays, one=one, bounds=bounds))
        else:
            c = body["transfers"]
            if type(c) is not dict:
                raise CodecError("transfers are a dict")
            _keys(c, "shard", "link", "step", "reduce", "lo", "hi", "values")
            if type(c["values"]) is not list:
                raise CodecError("a fraction table is a list")
            values = [_fraction(x) for x in c["values"]]
            step = self.array(c["step"], "iu")
            n = len(step)
            shard, link = (self.array(c[f], "iu", n).tolist() for f in ("shard", "link"))
            reduce = self.array(c["reduce"], "b", n).tolist()
            lo, hi = (self.positions(c[f], n, len(values)) for f in ("lo", "hi"))
            transfers = [Transfer(sh, values[a], values[b], li, st, rd)
                         for sh, a, b, li, st, rd in zip(shard, lo, hi, link, step.tolist(), reduce)]
            schedule = Schedule(collective, transfers, self.text(body["algo"]), notes, demand=demand, root=root,
                                group=group)
        return self.define(node, schedule)

    def topology(self, node: dict) -> Topology:
        _keys(node, "$topology", "$id")
        body = node["$topology"]
        if type(body) is not dict:
            raise CodecError("a topology is a dict")
        _keys(body, "names", "kinds", "name", "expr", "src", "dst", "bandwidth", "alpha", "values")
        if type(body["names"]) is not list or type(body["kinds"]) is not list or type(body["values"]) is not list:
            raise CodecError("a topology's names, kinds and values are lists")
        names = tuple(self.text(x) for x in body["names"])
        kinds = tuple(self.text(x) for x in body["kinds"])
        values = [_fraction(x) for x in body["values"]]
        src = self.array(body["src"], "iu")
        n = len(src)
        dst = self.array(body["dst"], "iu", n)
        bandwidth, alpha = (self.positions(body[f], n, len(values)) for f in ("bandwidth", "alpha"))
        links = tuple(Link(s, t, values[b], values[a])
                      for s, t, b, a in zip(src.tolist(), dst.tolist(), bandwidth, alpha))
        topo = Topology(names, kinds, links, name=self.text(body["name"]), expr=self.text(body["expr"]))
        return self.define(node, topo)
