"""Distributed XGBoost training on generated data, over the master's tracker.

Every replica of an XGBoostTrainingJob runs this. The master (RANK 0) also
runs the Rabit tracker on MASTER_PORT; every replica, the master included,
joins it at MASTER_ADDR:MASTER_PORT, trains on its shard of the data, and
prints the world size it saw and a digest of the model, which the
allreduce of the histograms makes the same on every rank.
"""

import hashlib
import os
import socket
import time

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])

tracker = None
if rank == 0:
    tracker = RabitTracker(host_ip="0.0.0.0", n_workers=world, port=port)
    tracker.start(world)

# The tracker's client gives up at once on a name that does not resolve:
# wait until the master's Service has its address.
while True:
    try:
        socket.getaddrinfo(addr, port)
        break
    except socket.gaierror:
        time.sleep(0.5)
env = {"DMLC_TRACKER_URI": addr, "DMLC_TRACKER_PORT": port, "DMLC_TASK_ID": f"replica-{rank}",
       "DMLC_WORKER_CONNECT_RETRY": 30}
with collective.CommunicatorContext(**env):
    size = collective.get_world_size()
    me = collective.get_rank()
    rng = np.random.default_rng(1234)
    x = rng.normal(size=(2000, 6))
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(int)
    shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    train = xgb.DMatrix(x[shard], label=y[shard])
    params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 4, "nthread": 1, "seed": 0}
    result = {}
    booster = xgb.train(params, train, num_boost_round=20, evals=[(train, "train")], evals_result=result, verbose_eval=False)
    digest = hashlib.sha256(booster.save_raw("json")).hexdigest()[:16]
    print(f"rank={rank} collective_rank={me} world_size={size} "
          f"final_logloss={result['train']['logloss'][-1]:.6f} model={digest}", flush=True)

if tracker is not None:
    tracker.join()
