"""Request-response service with one request in flight; every request's latency is kept.

    server PORT               answers requests; each costs `work` rounds of SHA-256 on the server
    client HOST PORT N REQ RESP WORK [SECONDS]
                              sends N requests of REQ bytes asking for RESP bytes (at most SECONDS),
                              prints every round-trip latency in microseconds, then the server's CPU
                              time over the run, so utilization can be computed.

Wire format: a 12-byte header (request size, response size, work rounds; network order), then the
request payload; the reply is the response payload. A header with work rounds = 2**32-1 asks for
the server's CPU seconds since its start instead (an 8-byte double). Standard library only.
"""

import socket
import struct
import sys
import time

HEADER = struct.Struct("!III")
STATS = 2**32 - 1


def _recv_exact(sock, size, buffer):
    view = memoryview(buffer)[:size]
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            raise ConnectionError("peer closed")
        got += n


def _work(rounds):
    import hashlib

    digest = b"kit"
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()
    return digest


def serve(port):
    import resource

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(8)
    header = bytearray(HEADER.size)
    payload = bytearray(1 << 20)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                _recv_exact(conn, HEADER.size, header)
                req, resp, rounds = HEADER.unpack(header)
                if rounds == STATS:
                    usage = resource.getrusage(resource.RUSAGE_SELF)
                    conn.sendall(struct.pack("!d", usage.ru_utime + usage.ru_stime))
                    continue
                if req:
                    _recv_exact(conn, min(req, len(payload)), payload)
                if rounds:
                    _work(rounds)
                conn.sendall(bytes(resp) if resp else b"\0")
        except ConnectionError:
            conn.close()


def _server_cpu(sock):
    sock.sendall(HEADER.pack(0, 0, STATS))
    buffer = bytearray(8)
    _recv_exact(sock, 8, buffer)
    return struct.unpack("!d", buffer)[0]


def client(host, port, count, req, resp, rounds, seconds):
    sock = socket.create_connection((host, port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = HEADER.pack(req, resp, rounds) + bytes(req)
    reply = bytearray(max(resp, 1))
    expected = max(resp, 1)
    latencies = []
    cpu_before = _server_cpu(sock)
    started = time.perf_counter()
    deadline = started + seconds
    clock = time.perf_counter_ns
    for _ in range(count):
        t0 = clock()
        sock.sendall(request)
        _recv_exact(sock, expected, reply)
        latencies.append((clock() - t0) / 1000.0)
        if time.perf_counter() > deadline:
            break
    wall = time.perf_counter() - started
    cpu = _server_cpu(sock) - cpu_before
    sock.close()
    out = sys.stdout
    out.write(f"kit-rr requests={len(latencies)} request_bytes={req} response_bytes={resp} work={rounds}\n")
    out.write(f"kit-rr wall_seconds={wall:.6f} server_cpu_seconds={cpu:.6f}\n")
    out.write("kit-rr latencies_us\n")
    out.write("\n".join(f"{v:.2f}" for v in latencies))
    out.write("\nkit-rr end\n")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "server":
        serve(int(sys.argv[2]))
    elif mode == "client":
        host, port, count, req, resp, rounds = sys.argv[2:8]
        seconds = float(sys.argv[8]) if len(sys.argv) > 8 else 3600.0
        client(host, int(port), int(count), int(req), int(resp), int(rounds), seconds)
    else:
        sys.exit(__doc__)
