#!/usr/bin/python3
"""A stand-in for File Browser in the local cluster, whose images cannot be
pulled there: it takes File Browser's command line as the Explorer
controller writes it (and refuses any other flag, as File Browser would),
opens its database file, and answers File Browser's health check and the
directory listing of its REST API under --baseurl."""
import argparse
import http.server
import json
import os
import sys
import urllib.parse

p = argparse.ArgumentParser(prog="filebrowser")
p.add_argument("--address", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--root", required=True)
p.add_argument("--baseurl", required=True)
p.add_argument("--database", required=True)
p.add_argument("--noauth", action="store_true")
args = p.parse_args()  # a wrong command line exits 2
if not args.noauth:
    sys.exit("filebrowser: the stand-in serves without authentication only")
open(args.database, "a").close()
root = os.path.realpath(args.root)
base = args.baseurl.rstrip("/")


class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if not path.startswith(base + "/"):
            return self.reply(404, {"error": "not under " + base})
        rest = path[len(base):]
        if rest == "/health":
            return self.reply(200, {"status": "OK"})
        if not rest.startswith("/api/resources"):
            return self.reply(404, {"error": "not found"})
        target = os.path.realpath(os.path.join(root, rest[len("/api/resources"):].lstrip("/")))
        if target != root and not target.startswith(root + os.sep):
            return self.reply(403, {"error": "outside the root"})
        if not os.path.isdir(target):
            return self.reply(404, {"error": "no such directory"})
        def rel(path):
            r = os.path.relpath(path, root)
            return "/" if r == "." else "/" + r

        items = []
        for e in sorted(os.scandir(target), key=lambda e: e.name):
            st = e.stat()
            items.append({"name": e.name, "isDir": e.is_dir(), "size": st.st_size,
                          "path": rel(e.path)})
        self.reply(200, {"path": rel(target), "isDir": True, "items": items,
                         "numDirs": sum(i["isDir"] for i in items),
                         "numFiles": sum(not i["isDir"] for i in items)})


print(f"Listening on {args.address}:{args.port}", flush=True)
http.server.ThreadingHTTPServer((args.address, args.port), Handler).serve_forever()
