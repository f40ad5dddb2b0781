"""A small CPU set, timed inside the interpreter: run by native CPython and inside forge-host's
CPython component by `cargo xtask bench`. Each kernel's time is the median of five runs, in ms.

It stays in small integers: on wasm32 a C `long` is 32 bits, so `sum(range(10**6))` leaves
CPython's fast path there and measures that instead of the interpreter (bench/FLOORS.md)."""

import json
import math
import re
import time


def loop():
    total = 0
    for i in range(300_000):
        total += i & 0xFF
    return total


def json_round_trip():
    rows = [{"id": i, "name": f"row-{i}", "score": i * 0.5, "tags": ["a", "b"]} for i in range(2_000)]
    for _ in range(5):
        rows = json.loads(json.dumps(rows))
    return len(rows)


def regex():
    text = " ".join(f"user{i}@example{i % 7}.org said {i}" for i in range(3_000))
    pattern = re.compile(r"(\w+)@(\w+)\.org said (\d+)")
    return sum(int(m.group(3)) & 1 for m in pattern.finditer(text))


def nbody():
    # The classic benchmark, 2,000 steps of the five-body system.
    pi = math.pi
    days = 365.24
    mass = 4 * pi * pi
    bodies = [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, mass],
        [4.84143144246472090e00, -1.16032004402742839e00, -1.03622044471123109e-01,
         1.66007664274403694e-03 * days, 7.69901118419740425e-03 * days,
         -6.90460016972063023e-05 * days, 9.54791938424326609e-04 * mass],
        [8.34336671824457987e00, 4.12479856412430479e00, -4.03523417114321381e-01,
         -2.76742510726862411e-03 * days, 4.99852801234917238e-03 * days,
         2.30417297573763929e-05 * days, 2.85885980666130812e-04 * mass],
        [1.28943695621391310e01, -1.51111514016986312e01, -2.23307578892655734e-01,
         2.96460137564761618e-03 * days, 2.37847173959480950e-03 * days,
         -2.96589568540237556e-05 * days, 4.36624404335156298e-05 * mass],
        [1.53796971148509165e01, -2.59193146099879641e01, 1.79258772950371181e-01,
         2.68067772490389322e-03 * days, 1.62824170038242295e-03 * days,
         -9.51592254519715870e-05 * days, 5.15138902046611451e-05 * mass],
    ]
    pairs = [(bodies[i], bodies[j]) for i in range(5) for j in range(i + 1, 5)]
    for _ in range(2_000):
        for (b1, b2) in pairs:
            dx, dy, dz = b1[0] - b2[0], b1[1] - b2[1], b1[2] - b2[2]
            mag = 0.01 * ((dx * dx + dy * dy + dz * dz) ** -1.5)
            m1, m2 = b1[6] * mag, b2[6] * mag
            b1[3] -= dx * m2
            b1[4] -= dy * m2
            b1[5] -= dz * m2
            b2[3] += dx * m1
            b2[4] += dy * m1
            b2[5] += dz * m1
        for b in bodies:
            b[0] += 0.01 * b[3]
            b[1] += 0.01 * b[4]
            b[2] += 0.01 * b[5]
    return bodies[0][0]


KERNELS = {"loop": loop, "json": json_round_trip, "regex": regex, "nbody": nbody}


def measure():
    times = {}
    for name, kernel in KERNELS.items():
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            kernel()
            samples.append((time.perf_counter() - started) * 1000)
        times[name] = sorted(samples)[2]
    return times


try:
    import forge
except ImportError:
    print(json.dumps(measure()))
else:
    forge.result(measure())
