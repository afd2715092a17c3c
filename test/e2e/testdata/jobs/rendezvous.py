"""Replicas of a GenericJob that find each other by the addresses the job
substitutes into their arguments.

Usage: rendezvous.py RANK PORT HOST...: listen on PORT, send RANK to
every HOST:PORT (retrying until it answers), collect the rank of every
other host, and print them.
"""

import socket
import sys
import threading
import time

rank, port, hosts = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
heard = {rank}
lock = threading.Lock()
server = socket.create_server(("", port))


def serve():
    while True:
        conn, _ = server.accept()
        with conn:
            peer = int(conn.recv(16).decode())
            conn.sendall(b"ok")
        with lock:
            heard.add(peer)


threading.Thread(target=serve, daemon=True).start()
for i, host in enumerate(hosts):
    if i == rank:
        continue
    deadline = time.time() + 180
    while True:
        try:
            with socket.create_connection((host, port), timeout=5) as c:
                c.sendall(str(rank).encode())
                if c.recv(2) == b"ok":
                    print(f"rank={rank} reached {host}:{port}", flush=True)
                    break
        except OSError as e:
            if time.time() > deadline:
                raise SystemExit(f"rank={rank} cannot reach {host}:{port}: {e}")
            time.sleep(0.5)
deadline = time.time() + 180
while len(heard) < len(hosts) and time.time() < deadline:
    time.sleep(0.2)
with lock:
    print(f"rank={rank} heard={','.join(map(str, sorted(heard)))}", flush=True)
if len(heard) < len(hosts):
    raise SystemExit(1)
