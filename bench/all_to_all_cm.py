#!/usr/bin/env python3
"""Writes an htsim connection matrix (docs/formats.md) for an all-to-all among N hosts: every
host sends PER_HOST bytes split evenly over the N - 1 others, all flows starting at 0.
Usage: bench/all_to_all_cm.py N PER_HOST_BYTES OUT.cm"""
import sys

hosts, per_host, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
per_flow = per_host // (hosts - 1)
with open(path, "w") as out:
    out.write(f"Nodes {hosts}\nConnections {hosts * (hosts - 1)}\n")
    flow = 1
    for src in range(hosts):
        for dst in range(hosts):
            if src != dst:
                out.write(f"{src}->{dst} id {flow} start 0 size {per_flow}\n")
                flow += 1
