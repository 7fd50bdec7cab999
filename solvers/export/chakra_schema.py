"""The Chakra execution-trace (ET) schema, built here from its field names and numbers, and its file framing.

Chakra (MLCommons; ``schema/protobuf/et_def.proto``, package ``ChakraProtoMsg``) describes one rank's work as a
graph of ``Node`` messages. A file holds a ``GlobalMetadata`` message and then the nodes, each message preceded by
its length as a base-128 varint (protobuf's length-delimited framing, which ASTRA-sim's feeder reads with
``ProtobufUtils::readMessage``). The schema is declared below as a ``FileDescriptorProto`` with the proto file's
names and numbers, so no generated code is vendored; only the messages the traces use are declared (an
``AttributeProto`` value of another kind is still carried through as an unknown field by the reader).

Public: ``Node``, ``GlobalMetadata``, ``AttributeProto`` (message classes), ``NODE_TYPES``/``COLLECTIVE_TYPES``
(name -> number), ``attr(name, value)``, ``attr_value(a)``, ``frame(msg)`` and ``unframe(data)``.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["AttributeProto", "COLLECTIVE_TYPES", "GlobalMetadata", "NODE_TYPES", "Node", "SchemaError", "attr",
           "attr_value", "frame", "unframe"]

PACKAGE = "ChakraProtoMsg"
NODE_TYPES = {"INVALID_NODE": 0, "METADATA_NODE": 1, "MEM_LOAD_NODE": 2, "MEM_STORE_NODE": 3, "COMP_NODE": 4,
              "COMM_SEND_NODE": 5, "COMM_RECV_NODE": 6, "COMM_COLL_NODE": 7}
COLLECTIVE_TYPES = {"ALL_REDUCE": 0, "REDUCE": 1, "ALL_GATHER": 2, "GATHER": 3, "SCATTER": 4, "BROADCAST": 5,
                    "ALL_TO_ALL": 6, "REDUCE_SCATTER": 7, "REDUCE_SCATTER_BLOCK": 8, "BARRIER": 9}
# AttributeProto's oneof ``value``: the scalar members (name, number, protobuf type) the traces use.
_ATTR_VALUES = (("double_val", 3, "TYPE_DOUBLE"), ("int32_val", 7, "TYPE_INT32"), ("int64_val", 9, "TYPE_INT64"),
                ("uint32_val", 11, "TYPE_UINT32"), ("uint64_val", 13, "TYPE_UINT64"), ("bool_val", 27, "TYPE_BOOL"),
                ("string_val", 29, "TYPE_STRING"))
MAX_MESSAGE_BYTES = 64 * 2 ** 20     # one node or metadata message; a trace's messages are a few hundred bytes


class SchemaError(ValueError):
    """A trace file that is not length-delimited Chakra ET; one line."""


def _field(msg, name, number, kind, label="LABEL_OPTIONAL", type_name=None, oneof=None):
    f = msg.field.add(name=name, number=number, type=getattr(descriptor_pb2.FieldDescriptorProto, kind),
                      label=getattr(descriptor_pb2.FieldDescriptorProto, label))
    if type_name:
        f.type_name = f".{PACKAGE}.{type_name}"
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="studio_et_def.proto", package=PACKAGE, syntax="proto3")
    a = fd.message_type.add(name="AttributeProto")
    _field(a, "name", 1, "TYPE_STRING")
    _field(a, "doc_string", 2, "TYPE_STRING")
    a.oneof_decl.add(name="value")
    for name, number, kind in _ATTR_VALUES:
        _field(a, name, number, kind, oneof=0)
    g = fd.message_type.add(name="GlobalMetadata")
    _field(g, "version", 1, "TYPE_STRING")
    _field(g, "attr", 2, "TYPE_MESSAGE", "LABEL_REPEATED", "AttributeProto")
    for enum_name, values in (("NodeType", NODE_TYPES), ("CollectiveCommType", COLLECTIVE_TYPES)):
        e = fd.enum_type.add(name=enum_name)
        for name, number in values.items():
            e.value.add(name=name, number=number)
    io = fd.message_type.add(name="IOInfo")
    for name, number in (("values", 1), ("shapes", 2), ("types", 3)):
        _field(io, name, number, "TYPE_STRING")
    n = fd.message_type.add(name="Node")
    _field(n, "id", 1, "TYPE_UINT64")
    _field(n, "name", 2, "TYPE_STRING")
    _field(n, "type", 3, "TYPE_ENUM", type_name="NodeType")
    _field(n, "ctrl_deps", 4, "TYPE_UINT64", "LABEL_REPEATED")
    _field(n, "data_deps", 5, "TYPE_UINT64", "LABEL_REPEATED")
    _field(n, "start_time_micros", 6, "TYPE_UINT64")
    _field(n, "duration_micros", 7, "TYPE_UINT64")
    _field(n, "inputs", 8, "TYPE_MESSAGE", type_name="IOInfo")
    _field(n, "outputs", 9, "TYPE_MESSAGE", type_name="IOInfo")
    _field(n, "attr", 10, "TYPE_MESSAGE", "LABEL_REPEATED", "AttributeProto")
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())
AttributeProto = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.AttributeProto"))
GlobalMetadata = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.GlobalMetadata"))
Node = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.Node"))


def attr(name: str, value) -> "AttributeProto":
    """An attribute as the traces write them: bool -> bool_val, int -> int64_val (uint64_val above 2^63 - 1),
    float -> double_val, str -> string_val. ASTRA-sim's feeder converts any integer kind to what it asks for."""
    a = AttributeProto(name=name)
    if isinstance(value, bool):
        a.bool_val = value
    elif isinstance(value, int):
        if value < 0 or value < 2 ** 63:
            a.int64_val = value
        else:
            a.uint64_val = value
    elif isinstance(value, float):
        a.double_val = value
    elif isinstance(value, str):
        a.string_val = value
    else:
        raise TypeError(f"attribute {name}: no Chakra value for {type(value).__name__}")
    return a


def attr_value(a):
    """The value an attribute carries (None when it holds a kind this schema does not declare)."""
    which = a.WhichOneof("value")
    return None if which is None else getattr(a, which)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def frame(msg) -> bytes:
    """One message, length-delimited: its size as a varint, then its bytes."""
    body = msg.SerializeToString()
    return _varint(len(body)) + body


def unframe(data: bytes) -> list[bytes]:
    """The message bodies of a length-delimited stream; SchemaError for a truncated or oversized one."""
    out, pos, end = [], 0, len(data)
    while pos < end:
        size, shift = 0, 0
        while True:
            if pos >= end:
                raise SchemaError(f"a length prefix is cut off at byte {pos}")
            byte = data[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
            if shift > 63:
                raise SchemaError(f"a length prefix longer than 10 bytes ends at byte {pos}")
        if size > MAX_MESSAGE_BYTES or pos + size > end:
            raise SchemaError(f"a message of {size} bytes at byte {pos} runs past the file's end ({end} bytes)"
                              if pos + size > end else f"a message of {size} bytes is over the limit")
        out.append(data[pos:pos + size])
        pos += size
    return out
