"""write_safetensors_seeds.py - the safetensors fuzzer's seeds (tests/fuzz/corpus_safetensors/).

Valid files (several dtypes, an empty and a 0-dim tensor, metadata, a state dict the fuzz
target's model accepts) and the reference's known attacks: a huge header length, overlapping
offsets, offsets past the end, a JSON bomb, a header padded with NUL bytes (the reference pads
with spaces and its JSON parser refuses a NUL). Plain Python (struct, json): no torch needed.
    /usr/bin/python3 tests/fuzz/write_safetensors_seeds.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_safetensors")


def file_of(header_text, data=b""):
    if isinstance(header_text, str):
        header_text = header_text.encode("utf-8")
    return struct.pack("<Q", len(header_text)) + header_text + data


def valid(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    return file_of(text, data)


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


seeds = {
    "state_dict_f32": valid([("0.weight", "F32", [3, 2], f32(*range(6))), ("0.bias", "F32", [3], f32(1, 2, 3)),
                             ("1.weight", "F32", [3], f32(1, 1, 1)), ("1.bias", "F32", [3], f32(0, 0, 0))],
                            {"format": "pt"}),
    "dtypes": valid([("a", "F64", [2], struct.pack("<2d", 0.5, -1e300)), ("b", "F16", [3], struct.pack("<3H", 0x3c00, 0x0001, 0x7e00)),
                     ("c", "BF16", [1, 2], struct.pack("<2H", 0x3f80, 0xff80)), ("d", "I64", [1], struct.pack("<q", 7)),
                     ("e", "U8", [2], b"\x01\x02")]),
    "empty_and_scalar": valid([("empty", "F32", [0, 4], b""), ("scalar", "F32", [], f32(2.5))], {"k": "v", "é": "ü"}),
    "no_tensors": valid([], {"only": "metadata"}),
    "attack_huge_header_length": struct.pack("<Q", 2 ** 63) + b"{}",
    "attack_header_past_end": struct.pack("<Q", 1000) + b'{"a":{}}',
    "attack_overlapping_offsets": file_of('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                          '"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', bytes(12)),
    "attack_offsets_past_end": file_of('{"x":{"dtype":"F32","shape":[1000000],"data_offsets":[0,4000000]}}', bytes(16)),
    "attack_overflow_shape": file_of('{"x":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}}'),
    "attack_json_bomb": file_of('{"x":' + "[" * 10000 + "]" * 10000 + "}"),
    "many_entries": valid([("layer.%d.weight" % i, "F32", [1], f32(i)) for i in range(500)]),
    "attack_nul_padded_header": file_of(b'{"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}' + bytes(3), bytes(4)),
    "attack_duplicate_name": file_of('{"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]},'
                                     '"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}', bytes(4)),
}

os.makedirs(OUT, exist_ok=True)
for name, b in seeds.items():
    with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
        f.write(b)
print(f"wrote {len(seeds)} seeds to {OUT}")
