import base64
import io

import forge
import lzma
import preload

# The C half of lzma (`_lzma`, liblzma from xz 5.8.1 compiled to wasm) is in the snapshot.
data = bytes(range(256)) * 64 + b"forge" * 4000


def round_trip(**options):
    packed = lzma.compress(data, **options)
    decode = {k: v for k, v in options.items() if k in ("format", "filters")}
    return lzma.decompress(packed, **decode) == data, packed[:6].hex()


xz = lzma.compress(data)
bounded = lzma.LZMADecompressor()
first = bounded.decompress(xz, max_length=100)

buffer = io.BytesIO()
with lzma.LZMAFile(buffer, "wb", check=lzma.CHECK_SHA256) as f:
    f.write(data)
with lzma.open(io.BytesIO(buffer.getvalue()), "rt", encoding="latin-1", newline="") as f:
    text = f.read()

filters = [{"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_X86},
           {"id": lzma.FILTER_LZMA2, "preset": 1}]

# b"forge-host\n" * 100 compressed natively (CPython 3.11's lzma with Debian's liblzma):
# the .xz format (CRC64) and the legacy .lzma ("alone") format.
NATIVE_XZ = base64.b64decode(
    "/Td6WFoAAATm1rRGAgAhARYAAAB0L+Wj4ARLABddADMbyqsO+BXIdR3zp1QU9Wt5DdodagtrAAAIaypEFvMDJwAB"
    "M8wIAAAA64zqqLHEZ/sCAAAAAARZWg==")
NATIVE_ALONE = base64.b64decode("XQAAgAD//////////wAzG8qrDvgVyHUd86dUFPVreQ3aIVLdGv/+RaAA")

try:
    lzma.decompress(b"not compressed at all")
    garbage = "accepted"
except lzma.LZMAError as error:
    garbage = str(error)

forge.result({
    "xz": round_trip(),
    "xz_crc32": round_trip(check=lzma.CHECK_CRC32),
    "xz_sha256": round_trip(check=lzma.CHECK_SHA256),
    "xz_extreme": round_trip(preset=6 | lzma.PRESET_EXTREME),
    "alone": round_trip(format=lzma.FORMAT_ALONE),
    "raw_filter_chain": round_trip(format=lzma.FORMAT_RAW, filters=filters)[0],
    "checks": [lzma.is_check_supported(c) for c in
               (lzma.CHECK_NONE, lzma.CHECK_CRC32, lzma.CHECK_CRC64, lzma.CHECK_SHA256)],
    "bounded": [len(first), first == data[:100], bounded.needs_input],
    "file_object": [buffer.getvalue()[:6].hex(), text.encode("latin-1") == data],
    "native_xz": lzma.decompress(NATIVE_XZ).decode().count("forge-host\n"),
    "native_alone": lzma.decompress(NATIVE_ALONE).decode().count("forge-host\n"),
    "garbage": garbage,
    "missing": [m for m in preload.MISSING if m in ("bz2", "lzma")],
})
