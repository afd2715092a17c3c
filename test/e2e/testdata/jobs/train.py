"""Data-parallel training of a linear model on generated data, over gloo.

Every replica of a PyTorchTrainingJob runs this, with the environment the
job sets (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), or under torchrun,
which sets it for the processes it starts. The data come from a fixed seed,
each rank trains on its shard, DistributedDataParallel averages the
gradients, and every rank prints the loss of the final model on the whole
data set: the same line on every rank.

--epochs sets the length of the training. --grow-to N keeps an elastic
training going while the world is smaller than N: torchrun restarts it
with a larger world when a node joins. --attempts-key makes a non-zero rank
exit with code 137, what SIGKILL or the OOM killer gives, on its first
attempt, counted in the master's store, so that a job shows a restart.
"""

import argparse
import datetime
import os
import signal
import socket
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=60)
parser.add_argument("--grow-to", type=int, default=0)
parser.add_argument("--attempts-key", default="")
args = parser.parse_args()

torch.set_num_threads(1)
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
timeout = datetime.timedelta(minutes=5)
if "TORCHELASTIC_RUN_ID" in os.environ:
    dist.init_process_group("gloo", timeout=timeout)
else:
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=rank == 0, timeout=timeout, wait_for_workers=False)
    if args.attempts_key and rank != 0:
        attempt = store.add(args.attempts_key, 1)
        print(f"rank={rank} attempt={attempt}", flush=True)
        if attempt == 1:
            # The container's init ignores signals it has no handler for,
            # SIGKILL sent from inside too: exit with its code instead.
            os._exit(128 + signal.SIGKILL)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
print(f"rank={rank} world_size={world} host={socket.gethostname()} training", flush=True)

gen = torch.Generator().manual_seed(1234)
x = torch.randn(1024, 8, generator=gen)
y = x @ torch.randn(8, 1, generator=gen) + 0.01 * torch.randn(1024, 1, generator=gen)
shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)

torch.manual_seed(rank)  # different on each rank: DDP starts them all from rank 0's
model = torch.nn.Linear(8, 1)
ddp = DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
loss_fn = torch.nn.MSELoss()
with torch.no_grad():
    initial = loss_fn(model(x), y).item()


def step():
    opt.zero_grad()
    loss = loss_fn(ddp(x[shard]), y[shard])
    loss.backward()
    opt.step()


while world < args.grow_to:
    step()
    time.sleep(0.1)
for epoch in range(args.epochs):
    step()
with torch.no_grad():
    final = loss_fn(model(x), y).item()
print(f"rank={rank} world_size={world} initial_loss={initial:.6f} final_loss={final:.6f}", flush=True)
dist.barrier()
dist.destroy_process_group()
