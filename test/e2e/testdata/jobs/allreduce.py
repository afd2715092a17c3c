"""Sums rank+1 over every rank with an MPI allreduce and prints the sum."""
import socket

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
print(f"rank={rank} size={size} host={socket.gethostname()} sum={total}", flush=True)
