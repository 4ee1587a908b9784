"""The pinned model's graph, rewritten in memory so its int8 weights stay int8 when onnxruntime loads it.

The model file stores each weight as int8 with a float32 scale, turned back into a float32 weight by a `Cast` and a
`Mul` in the graph. onnxruntime's constant folding runs those once at load and keeps float32 copies (four times the
bytes, and the matrix multiplications' prepacked copies on top): ~160 MiB of the server's memory. Two rewrites
remove the expansion:

- an embedding table read by `Gather` (the vocabulary's 30,522 rows): gather the int8 rows and their scales, then
  `Cast` and `Mul` only the rows read. The arithmetic per element is the one folding did, so the outputs are
  bit-identical;
- a weight multiplied by `MatMul` with a per-column (or single) scale: `com.microsoft.DynamicQuantizeMatMul`,
  onnxruntime's integer kernel, which quantizes the activations per call and multiplies int8 by uint8 into int32.
  The vectors move a little (cosine 0.99 against the float path); the quality is measured in bench/RESULTS.md.

Only the ONNX protobuf fields these rewrites read are decoded (standard library, no `onnx` package); every other
byte of the file passes through as it was. A pattern that does not match exactly is left as the file has it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

INT8 = 3
FLOAT = 1
INT32 = 6
_LEN = 2
_VARINT = 0
MS_DOMAIN = "com.microsoft"

Field = tuple[int, int, memoryview | int, memoryview]
"""(field number, wire type, value: payload bytes or an integer, the field's encoded bytes as read)."""


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(buf: memoryview) -> Iterator[Field]:
    """The message's fields in order.

    Raises:
        ValueError: a wire type this reader does not know (groups): not a message it can rewrite.
    """
    pos = 0
    while pos < len(buf):
        start = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: memoryview | int
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
        elif wire == _LEN:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, wire, value, buf[start:pos]


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _put(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _put_varint(number << 3 | _LEN) + _put_varint(len(data)) + data


def _put_int(number: int, value: int) -> bytes:
    return _put_varint(number << 3 | _VARINT) + _put_varint(value)


class _Node:
    """A NodeProto's inputs, outputs, op type, domain and attribute names (the rest is kept as bytes)."""

    def __init__(self, raw: memoryview) -> None:
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.op = ""
        self.domain = ""
        self.attributes: dict[str, memoryview] = {}
        for number, _, value, _ in _fields(raw):
            if isinstance(value, int):
                continue
            if number == 1:
                self.inputs.append(str(value, "utf-8"))
            elif number == 2:
                self.outputs.append(str(value, "utf-8"))
            elif number == 4:
                self.op = str(value, "utf-8")
            elif number == 7:
                self.domain = str(value, "utf-8")
            elif number == 5:
                name = next((v for n, _, v, _ in _fields(value) if n == 1 and isinstance(v, memoryview)), b"")
                self.attributes[str(name, "utf-8")] = value


def _attribute_int(raw: memoryview) -> int | None:
    """An INT attribute's value (AttributeProto.i), None when it is not one."""
    value = next((v for n, w, v, _ in _fields(raw) if n == 3 and w == _VARINT), None)
    return value if isinstance(value, int) else None


def _node(op: str, inputs: list[str], outputs: list[str], domain: str = "", cast_to: int | None = None) -> bytes:
    body = b"".join(_put(1, i) for i in inputs) + b"".join(_put(2, o) for o in outputs)
    body += _put(3, f"{outputs[0]}/{op}") + _put(4, op)
    if cast_to is not None:  # AttributeProto: name "to", type INT (2), i
        body += _put(5, _put(1, "to") + _put_int(20, 2) + _put_int(3, cast_to))
    if domain:
        body += _put(7, domain)
    return _put(1, body)


class _Tensor:
    """An initializer's name, type and dims (TensorProto), and its encoded bytes."""

    def __init__(self, payload: memoryview) -> None:
        self.payload = payload
        self.name = ""
        self.dtype = 0
        self.dims: list[int] = []
        for number, wire, value, _ in _fields(payload):
            if number == 8 and isinstance(value, memoryview):
                self.name = str(value, "utf-8")
            elif number == 2 and isinstance(value, int):
                self.dtype = value
            elif number == 1 and isinstance(value, int):
                self.dims.append(value)
            elif number == 1 and isinstance(value, memoryview) and wire == _LEN:  # packed dims
                pos = 0
                while pos < len(value):
                    dim, pos = _varint(value, pos)
                    self.dims.append(dim)

    def renamed(self, dims: list[int]) -> bytes:
        """The same data under a name that says its new shape (an encoded `initializer` field)."""
        kept = b"".join(raw for number, _, _, raw in _fields(self.payload) if number not in (1, 8))
        return _put(
            5, b"".join(_put_int(1, d) for d in dims) + kept + _put(8, self.name + "/" + "x".join(map(str, dims)))
        )


def rewrite(model: bytes, matmuls: bool = True) -> bytes:
    """The model with its int8 weights kept int8 (module docstring); the bytes as given when nothing matches.
    `matmuls=False` rewrites the embedding tables only (bit-identical outputs; the benches measure each rewrite).

    Raises:
        ValueError: the bytes are not a protobuf message this reader can walk.
    """
    top = list(_fields(memoryview(model)))
    graph_at = next((i for i, f in enumerate(top) if f[0] == 7 and isinstance(f[2], memoryview)), None)
    if graph_at is None:
        return model
    graph_payload = top[graph_at][2]
    assert isinstance(graph_payload, memoryview)
    parts = list(_fields(graph_payload))
    tensors = {t.name: t for t in (_Tensor(v) for n, _, v, _ in parts if n == 5 and isinstance(v, memoryview))}
    nodes = {i: _Node(v) for i, (n, _, v, _) in enumerate(parts) if n == 1 and isinstance(v, memoryview)}
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    uses = Counter(name for node in nodes.values() for name in node.inputs)
    uses.update(_output_name(v) for n, _, v, _ in parts if n == 12 and isinstance(v, memoryview))
    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    added: dict[str, bytes] = {}
    for index, mul in nodes.items():
        if mul.op != "Mul" or mul.domain or len(mul.inputs) != 2 or mul.attributes or uses[mul.outputs[0]] != 1:
            continue
        cast_at = producer.get(mul.inputs[0])
        scale = tensors.get(mul.inputs[1])
        if cast_at is None or scale is None or scale.dtype != FLOAT or uses[mul.inputs[0]] != 1:
            continue
        cast = nodes[cast_at]
        to = _attribute_int(cast.attributes.get("to", memoryview(b"")))
        weight = tensors.get(cast.inputs[0]) if cast.op == "Cast" and not cast.domain else None
        if weight is None or weight.dtype != INT8 or to != FLOAT or len(weight.dims) != 2:
            continue
        user_at = next(i for i, node in nodes.items() if mul.outputs[0] in node.inputs)
        user = nodes[user_at]
        rows, cols = weight.dims
        if user.op == "Gather" and not user.domain and user.inputs[0] == mul.outputs[0] and scale.dims == [rows, 1]:
            axis = _attribute_int(user.attributes["axis"]) if "axis" in user.attributes else 0
            if axis != 0 or len(user.attributes) > ("axis" in user.attributes):
                continue
            ids, out = user.inputs[1], user.outputs[0]
            replaced[user_at] = (
                _node("Gather", [weight.name, ids], [out + "/q"])
                + _node("Cast", [out + "/q"], [out + "/f"], cast_to=FLOAT)
                + _node("Gather", [scale.name, ids], [out + "/scale"])
                + _node("Mul", [out + "/f", out + "/scale"], [out])
            )
        elif (
            matmuls
            and user.op == "MatMul"
            and not user.domain
            and user.inputs[1] == mul.outputs[0]
            and user.inputs[0] != mul.outputs[0]
            and scale.dims in ([1, cols], [cols], [], [1], [1, 1])
        ):
            width = [cols] if scale.dims in ([1, cols], [cols]) else []
            flat = scale.name + "/" + "x".join(map(str, width))
            if flat not in added:
                added[flat] = scale.renamed(width)
            replaced[user_at] = _node(
                "DynamicQuantizeMatMul", [user.inputs[0], weight.name, flat], user.outputs, domain=MS_DOMAIN
            )
        else:
            continue
        dropped.update((index, cast_at))
    if not replaced:
        return model
    body = b"".join(
        replaced.get(i, raw) for i, (_, _, _, raw) in enumerate(parts) if i not in dropped or i in replaced
    ) + b"".join(added.values())
    result = b"".join(_put(7, body) if i == graph_at else raw for i, (_, _, _, raw) in enumerate(top))
    if added and not _imports(top, MS_DOMAIN):  # a scale was reshaped: DynamicQuantizeMatMul is used
        result += _put(8, _put(1, MS_DOMAIN) + _put_int(2, 1))
    return result


def _output_name(value_info: memoryview) -> str:
    """A graph output's name (ValueInfoProto.name): an output counts as a use of the tensor it names."""
    return str(next((v for n, _, v, _ in _fields(value_info) if n == 1 and isinstance(v, memoryview)), b""), "utf-8")


def _imports(top: list[Field], domain: str) -> bool:
    """Whether the model already imports an operator set of `domain`."""
    for number, _, value, _ in top:
        if number == 8 and isinstance(value, memoryview):
            found = next((v for n, _, v, _ in _fields(value) if n == 1 and isinstance(v, memoryview)), b"")
            if str(found, "utf-8") == domain:
                return True
    return False


def _value_info(name: str, element: int, dims: list[int | str]) -> bytes:
    """A ValueInfoProto: a tensor of `element` type whose dims are numbers or named (any size)."""
    shape = b"".join(_put(1, _put(2, d) if isinstance(d, str) else _put_int(1, d)) for d in dims)
    return _put(1, name) + _put(2, _put(1, _put_int(1, element) + _put(2, shape)))


def int8_scores(width: int) -> bytes:
    """A model of one `MatMulInteger`: `rows` (n × width, int8) times `query` (width × 1, int8) → `scores` (n × 1,
    int32), exact. onnxruntime's integer kernel reads the rows about twice as fast as numpy's `einsum` (measured
    in bench/RESULTS.md), and a process that searches has onnxruntime loaded for the encoder anyway."""
    body = (
        _node("MatMulInteger", ["rows", "query"], ["scores"])
        + _put(2, "int8_scores")
        + _put(11, _value_info("rows", INT8, ["n", width]))
        + _put(11, _value_info("query", INT8, [width, 1]))
        + _put(12, _value_info("scores", INT32, ["n", 1]))
    )
    return _put_int(1, 8) + _put(8, _put(1, "") + _put_int(2, 13)) + _put(7, body)
