#!/usr/bin/python3
"""A linear model behind KServe's v1 prediction protocol (see modelserver.go)."""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def load(model_dir):
    if not model_dir:
        return None, 0.0
    path = os.path.join(model_dir, "model.json")
    try:
        with open(path) as f:
            model = json.load(f)
        return [float(w) for w in model["weights"]], float(model.get("bias", 0))
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit("model-server: cannot load %s: %s" % (path, e))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--model-dir", default="")
    p.add_argument("--name", default="model")
    p.add_argument("--tag", default="")
    args = p.parse_args()
    weights, bias = load(args.model_dir)
    base = "/v1/models/" + args.name

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # An answer's headers and body are two sends: without TCP_NODELAY
        # the body waits for the ACK of the headers, which the client
        # delays by about 40 ms.
        disable_nagle_algorithm = True

        def reply(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == base:
                self.reply(200, {"name": args.name, "ready": True})
            else:
                self.reply(404, {"error": "no model at " + self.path})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            if self.path != base + ":predict":
                self.reply(404, {"error": "no model at " + self.path})
                return
            try:
                instances = json.loads(raw)["instances"]
                out = []
                for x in instances:
                    w = weights if weights is not None else [1.0] * len(x)
                    if len(w) != len(x):
                        raise ValueError("an instance of %d values for %d weights" % (len(x), len(w)))
                    out.append(sum(a * float(b) for a, b in zip(w, x)) + bias)
            except (ValueError, KeyError, TypeError) as e:
                self.reply(400, {"error": str(e)})
                return
            self.reply(200, {"predictions": out, "model": args.name, "tag": args.tag})

        def log_message(self, fmt, *a):
            pass

    class Server(ThreadingHTTPServer):
        # socketserver's backlog of 5 resets connections that many
        # clients open at once.
        request_queue_size = 128

    srv = Server(("", args.port), Handler)
    print("model-server: serving %s on :%d (%s)" % (args.name, args.port,
          "weights %s, bias %s" % (weights, bias) if weights is not None else "no model file"), flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
