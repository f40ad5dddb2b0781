import base64
import bz2
import io

import forge
import preload

# The C half of bz2 (`_bz2`, libbz2 1.0.8 compiled to wasm) is in the engine's snapshot.
data = bytes(range(256)) * 64 + b"forge" * 4000
packed = bz2.compress(data, 9)

incremental = bz2.BZ2Compressor(1)
chunks = incremental.compress(data[:1000]) + incremental.compress(data[1000:]) + incremental.flush()

bounded = bz2.BZ2Decompressor()
first = bounded.decompress(packed, max_length=100)

buffer = io.BytesIO()
with bz2.BZ2File(buffer, "wb") as f:
    f.write(data)
with bz2.BZ2File(io.BytesIO(buffer.getvalue())) as f:
    read_back = f.read()

# b"forge-host\n" * 100 compressed by native bzip2 (CPython 3.11's bz2 with Debian's libbz2).
NATIVE = base64.b64decode(
    "QlpoOTFBWSZTWfWgX8EAAMfRgAAQAAIDwJwAIABQgBgFKo0wTpFgiyRYIuEWSLRFsi4IukX4u5IpwoSHrQL+CA==")

try:
    bz2.decompress(b"BZh9" + b"\0" * 40)
    corrupt = "accepted"
except OSError as error:
    corrupt = type(error).__name__

forge.result({
    "round_trip": bz2.decompress(packed) == data,
    "header": packed[:3].decode(),
    "ratio_below_a_tenth": len(packed) * 10 < len(data),
    "incremental": bz2.decompress(chunks) == data,
    "bounded": [len(first), first == data[:100], bounded.needs_input],
    "file_object": read_back == data,
    "multi_stream": bz2.decompress(bz2.compress(b"a") + bz2.compress(b"b")).decode(),
    "native": bz2.decompress(NATIVE).decode().count("forge-host\n"),
    "corrupt": corrupt,
    "missing": [m for m in preload.MISSING if m in ("bz2", "lzma")],
})
