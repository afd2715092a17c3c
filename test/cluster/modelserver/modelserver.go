// Package modelserver holds the model server of the local cluster's
// serving image: a small HTTP server of the Python standard library that
// answers KServe v1 predictions of a linear model, for the serving tests
// and the demo, where no framework's serving image can be pulled.
//
// model-server [--port 8080] [--model-dir DIR] [--name NAME] [--tag TAG]
// loads DIR/model.json ({"weights": [w...], "bias": b}; without
// --model-dir, weights of 1 and bias 0), and serves
//
//   - GET /v1/models/NAME: {"name": NAME, "ready": true};
//   - POST /v1/models/NAME:predict with {"instances": [[x...], ...]}:
//     {"predictions": [w·x + b, ...], "model": NAME, "tag": TAG}.
//
// A model directory without model.json, or a model.json it cannot read,
// exits 1 before it serves, so a pod whose model was not downloaded never
// turns ready.
package modelserver

import _ "embed"

// Script is the model server, installed as /usr/bin/model-server.
//
//go:embed model-server.py
var Script string

// Path is where the serving image holds Script.
const Path = "/usr/bin/model-server"
