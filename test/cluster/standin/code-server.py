#!/usr/bin/python3
"""A stand-in for code-server in the local cluster, whose images cannot be
pulled there: it takes code-server's command line as the Explorer
controller writes it (and refuses any other flag), and answers
code-server's health check and, at its root, the entries of the folder it
opens."""
import argparse
import http.server
import json
import os
import sys

p = argparse.ArgumentParser(prog="code-server")
p.add_argument("--bind-addr", required=True)
p.add_argument("--auth", choices=["none"], required=True)
p.add_argument("--disable-telemetry", action="store_true")
p.add_argument("--disable-update-check", action="store_true")
p.add_argument("folder")
args = p.parse_args()  # a wrong command line exits 2
host, _, port = args.bind_addr.rpartition(":")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/healthz":
            body = {"status": "alive", "lastHeartbeat": 0}
        elif self.path == "/":
            body = {"folder": args.folder, "entries": sorted(os.listdir(args.folder))}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


print(f"HTTP server listening on http://{host}:{port}/", flush=True)
http.server.ThreadingHTTPServer((host, int(port)), Handler).serve_forever()
