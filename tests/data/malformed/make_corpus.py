#!/usr/bin/env python3
"""Writes the malformed-input regression corpus: one minimal file per failure class, and
manifest.json with what opening each must do. Run it from anywhere; it rewrites this folder.

Each manifest entry: file; either "code" (the errorCodeName openCheckpoint must fail with) or
"opens": true; then what the error or finding must name - "tensor", "offset" (a byte offset in
the file) or "mention" (text of the message) - and the validation "finding" code expected (on that
tensor, when one is named): for a file that does not open, the integrity rule its error becomes
(docs/rules.md), from the table below.
tests/tst_malformed_corpus.cpp reads the manifest; the files are committed so the corpus is
exactly these bytes, reviewable with xxd.
"""
import json
import pathlib
import re
import struct

HERE = pathlib.Path(__file__).resolve().parent
cases = []


# The integrity rule each opening error is reported as (docs/rules.md, integrity family).
INTEGRITY_RULE = {
    "HeaderTooSmall": "WS-I001", "HeaderTooLarge": "WS-I002", "InvalidHeaderLength": "WS-I003", "InvalidHeaderUtf8": "WS-I004",
    "InvalidHeaderJson": "WS-I005", "FormatMismatch": "WS-I005", "UnknownDtype": "WS-I006", "InvalidOffset": "WS-I007",
    "ValidationOverflow": "WS-I008", "MisalignedSlice": "WS-I009", "TensorInvalidInfo": "WS-I010",
    "MetadataIncompleteBuffer": "WS-I011", "DuplicateTensor": "WS-I012", "GgufBadMagic": "WS-I018", "GgufBadVersion": "WS-I018",
    "GgufTruncated": "WS-I019", "GgufBadValue": "WS-I020", "DuplicateKey": "WS-I021", "GgufBadTensorInfo": "WS-I022",
}


def case(name, data, **expect):
    """code is written as the C++ enumerator (HeaderTooSmall) and stored as errorCodeName's spelling."""
    if "code" in expect:
        expect.setdefault("finding", INTEGRITY_RULE[expect["code"]])
        expect["code"] = re.sub(r"(?<!^)(?=[A-Z])", "_", expect["code"]).upper()
    (HERE / name).write_bytes(data)
    cases.append({"file": name, **expect})


# ---------------------------------------------------------------- safetensors
def st(header, data_len=0, length=None):
    h = header.encode("utf-8", "surrogateescape") if isinstance(header, str) else header
    return struct.pack("<Q", len(h) if length is None else length) + h + bytes(data_len)


def t(name, dtype, shape, b, e):
    return '"%s":{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}' % (name, dtype, json.dumps(shape), b, e)


def obj(*parts):
    return "{" + ",".join(parts) + "}"


case("st-shorter-than-8-bytes.safetensors", b"\x01\x02\x03", code="HeaderTooSmall", offset=0)
case("st-header-over-100mb.safetensors", st("{}", length=100_000_001), code="HeaderTooLarge", offset=0)
case("st-header-past-eof.safetensors", st("{}", length=1000), code="InvalidHeaderLength", offset=0)
case("st-header-not-utf8.safetensors", st(b'{"\xff":1}'), code="InvalidHeaderUtf8", offset=10)
case("st-header-not-json.safetensors", st('{"a":'), code="InvalidHeaderJson", offset=13)
case("st-header-nested-too-deep.safetensors", st("[" * 200 + "]" * 200), code="InvalidHeaderJson", offset=8)
case("st-offsets-gap.safetensors", st(obj(t("a", "U8", [4], 0, 4), t("b", "U8", [4], 8, 12)), 12), code="InvalidOffset", tensor="b")
case("st-offsets-overlap.safetensors", st(obj(t("a", "U8", [4], 0, 4), t("b", "U8", [4], 2, 6)), 6), code="InvalidOffset", tensor="b")
case("st-offsets-end-before-begin.safetensors", st(obj(t("a", "U8", [4], 4, 0)), 4), code="InvalidOffset", tensor="a")
case("st-offsets-past-data.safetensors", st(obj(t("a", "U8", [8], 0, 8)), 4), code="MetadataIncompleteBuffer", tensor="a")
case("st-shape-product-overflows.safetensors", st(obj(t("a", "U8", [2**32, 2**32, 2], 0, 0))), code="ValidationOverflow", tensor="a")
case("st-bytes-not-elements-x-dtype.safetensors", st(obj(t("a", "F32", [2], 0, 4)), 4), code="TensorInvalidInfo", tensor="a")
h = obj(t("a", "U8", [2], 0, 2))
case("st-trailing-bytes.safetensors", st(h, 5), code="MetadataIncompleteBuffer", offset=8 + len(h) + 2)
case("st-duplicate-names.safetensors", st(obj(t("a", "U8", [1], 0, 1), t("a", "U8", [1], 1, 2)), 2), code="DuplicateTensor", tensor="a")
# The reference reader accepts a zero-size tensor at another tensor's offset (it sorts by
# (begin, end) and only demands contiguity); so do we.
case("st-zero-size-shares-offset.safetensors", st(obj(t("empty", "U8", [0], 0, 0), t("b", "U8", [4], 0, 4)), 4), opens=True)
case("st-unknown-dtype.safetensors", st(obj(t("w", "F7", [1], 0, 1)), 1), code="UnknownDtype", tensor="w")
case("st-negative-dim.safetensors", st(obj(t("a", "U8", [-1], 0, 0))), code="InvalidHeaderJson", tensor="a")
case("st-metadata-not-string.safetensors", st('{"__metadata__":{"k":1}}'), code="InvalidHeaderJson", offset=8, mention="__metadata__ value for 'k'")
case("st-missing-data-offsets.safetensors", st('{"a":{"dtype":"U8","shape":[1]}}', 1), code="InvalidHeaderJson", tensor="a")
# Found by fuzz_checkpoint: a negative weight_shape entry was cast from float to uint64 (undefined
# behaviour, then a read far past the packed codes). Now: the file opens, validation flags it.
h = obj(t("q.weight_packed", "I32", [2, 1], 0, 8), t("q.weight_scale", "F32", [2, 1], 8, 16), t("q.weight_shape", "I64", [2], 16, 32))
case("st-weight-shape-negative.safetensors", st(h, 32)[:-16] + struct.pack("<qq", -3, 8), opens=True, finding="WS-S006",
     tensor="q.weight_shape")
# Found by fuzz_checkpoint in CI: gpt-oss MXFP4 "_blocks" without their "_scales" made the decoder
# dereference a missing scale tensor. Now: it opens, validation reports the missing scales.
case("st-mxfp4-blocks-without-scales.safetensors", st(obj(t("m.experts.down_proj_blocks", "U8", [2, 1, 16], 0, 32)), 32), opens=True,
     finding="WS-C003", tensor="m.experts.down_proj_blocks")
# Found by fuzz_checkpoint in CI (fixed seed 1): a tensor with no elements but a last dimension of
# 2^50 is valid safetensors; the value rules sized a buffer from that dimension alone (4 PiB).
case("st-zero-rows-huge-last-dim.safetensors", st(obj(t("w", "F32", [0, 2**50], 0, 0))), opens=True)
case("st-f4-odd-element-count.safetensors", st(obj(t("a", "F4", [3], 0, 2)), 2), code="MisalignedSlice", tensor="a")


# ---------------------------------------------------------------- GGUF
class G:
    """A GGUF byte builder that remembers where things start."""

    def __init__(self):
        self.b = bytearray()

    def put(self, fmt, *v):
        self.b += struct.pack("<" + fmt, *v)
        return self

    def s(self, text):
        raw = text.encode()
        return self.put("Q", len(raw)).raw(raw)

    def raw(self, data):
        self.b += data
        return self

    def at(self):
        return len(self.b)

    def header(self, n_tensors, n_kv, version=3):
        return self.raw(b"GGUF").put("I", version).put("q", n_tensors).put("q", n_kv)

    def info(self, name, ne, type_id, offset):
        self.s(name).put("I", len(ne))
        for d in ne:
            self.put("q", d)
        return self.put("i", type_id).put("Q", offset)

    def data(self, nbytes, alignment=32):
        self.b += bytes(-len(self.b) % alignment + nbytes)
        return bytes(self.b)


U32, I32, ARRAY, F32 = 4, 5, 9, 0

case("gg-bad-magic.gguf", G().raw(b"GGUX").put("I", 3).put("q", 0).put("q", 0).b, code="GgufBadMagic", offset=0)
case("gg-version-1.gguf", G().header(0, 0, version=1).b, code="GgufBadVersion", offset=4)
case("gg-version-4.gguf", G().header(0, 0, version=4).b, code="GgufBadVersion", offset=4)
case("gg-truncated-header.gguf", G().raw(b"GGUF").put("I", 3).put("H", 0).b, code="GgufTruncated", offset=8)
case("gg-n-tensors-2e63.gguf", G().raw(b"GGUF").put("I", 3).put("Q", 2**63).put("q", 0).b, code="GgufBadValue", offset=8)
case("gg-n-kv-2e63.gguf", G().raw(b"GGUF").put("I", 3).put("q", 0).put("Q", 2**63).b, code="GgufBadValue", offset=16)
case("gg-string-length-2e64-1.gguf", G().header(0, 1).put("Q", 2**64 - 1).raw(bytes(32)).b, code="GgufBadValue", offset=24)
# Offsets name the field at fault: the count, the element type, the value type.
g = G().header(0, 1).s("k").put("i", ARRAY).put("i", U32)
at = g.at()
case("gg-array-count-beyond-file.gguf", g.put("Q", 1_000_000).b, code="GgufTruncated", offset=at)
g = G().header(0, 1).s("k").put("i", ARRAY)
at = g.at()
case("gg-nested-array.gguf", g.put("i", ARRAY).put("Q", 1).b, code="GgufBadValue", offset=at)
g = G().header(0, 1).s("k")
at = g.at()
case("gg-unknown-kv-type.gguf", g.put("i", 13).put("I", 0).b, code="GgufBadValue", offset=at)
g = G().header(0, 2).s("k").put("i", U32).put("I", 1)
second = g.at()
case("gg-duplicate-key.gguf", g.s("k").put("i", U32).put("I", 1).b, code="DuplicateKey", offset=second)
g = G().header(1, 1).s("general.alignment").put("i", U32).put("I", 0).info("w", [8], F32, 0)
case("gg-alignment-zero.gguf", g.data(32), code="GgufBadValue", offset=24)
g = G().header(1, 1).s("general.alignment").put("i", U32).put("I", 48).info("w", [8], F32, 0)
case("gg-alignment-not-power-of-two.gguf", g.data(32), code="GgufBadValue", offset=24)
g = G().header(1, 1).s("general.alignment").put("i", I32).put("i", 32).info("w", [8], F32, 0)
case("gg-alignment-wrong-type.gguf", g.data(32), code="GgufBadValue", offset=24)
# 2^31 is a power of two, so ggml takes it; the data section would then start 2 GiB in.
g = G().header(1, 1).s("general.alignment").put("i", U32).put("I", 2**31).info("w", [8], F32, 0)
at = g.at()
case("gg-alignment-huge.gguf", g.data(32), code="GgufTruncated", offset=at)
case("gg-n-dims-5.gguf", G().header(1, 0).info("w", [1, 1, 1, 1, 1], F32, 0).data(32), code="GgufBadTensorInfo", tensor="w")
case("gg-negative-ne.gguf", G().header(1, 0).info("w", [-4], F32, 0).data(32), code="GgufBadTensorInfo", tensor="w")
case("gg-ne-overflows.gguf", G().header(1, 0).info("w", [2**62, 4], F32, 0).data(32), code="ValidationOverflow", tensor="w")
case("gg-type-id-out-of-range.gguf", G().header(1, 0).info("w", [4], 77, 0).data(32), code="UnknownDtype", tensor="w")
case("gg-ne0-not-whole-blocks.gguf", G().header(1, 0).info("w", [100], 12, 0).data(256), code="GgufBadTensorInfo", tensor="w")
g = G().header(2, 0).info("a", [8], F32, 0).info("b", [8], F32, 4)
case("gg-misaligned-offset.gguf", g.data(64), code="GgufBadTensorInfo", tensor="b")
case("gg-data-past-eof.gguf", G().header(1, 0).info("w", [64], F32, 0).data(32), code="GgufTruncated", tensor="w")
g = G().header(2, 0).info("a", [8], F32, 0).info("a", [8], F32, 32)
case("gg-duplicate-tensor-name.gguf", g.data(64), code="DuplicateTensor", tensor="a")
# Aligned and in bounds, but b sits at 64 where ggml expects 32: opens, validation warns.
g = G().header(2, 0).info("a", [8], F32, 0).info("b", [8], F32, 64)
case("gg-non-canonical-offset.gguf", g.data(96), opens=True, finding="WS-R003", tensor="b")

# ---------------------------------------------------------------- names that lie about the format
case("gguf-named.safetensors", G().header(1, 0).info("w", [8], F32, 0).data(32), code="FormatMismatch", offset=0)
case("safetensors-named.gguf", st(obj(t("a", "U8", [4], 0, 4)), 4), code="FormatMismatch", offset=0)

(HERE / "manifest.json").write_text(json.dumps(cases, indent=1) + "\n")
print(f"{len(cases)} cases")
