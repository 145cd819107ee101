"""A local two-node Ray cluster for the Ray suite (e2e/ray_test.go starts it once and runs every
cell's pytest against it): a head and one worker node, one CPU and 150 MiB of object store each, no
dashboard, its session files under the temporary directory given. It prints one JSON line,
{"address": <GCS address>, "nodes": 2}, once both nodes are alive, then waits for its standard input
to close (the Go test closing it, or dying) and shuts the cluster down. Ray's reaper kills the
nodes' processes if this one is killed instead.

usage: python cluster.py <temp dir>
"""

import json
import sys

import ray
from ray.cluster_utils import Cluster

NODE = dict(num_cpus=1, object_store_memory=150 * 1024 * 1024)


def main():
    temp_dir = sys.argv[1]
    cluster = Cluster(
        initialize_head=True,
        head_node_args=dict(NODE, include_dashboard=False, temp_dir=temp_dir),
    )
    try:
        cluster.add_node(**NODE)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
        alive = [n for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        print(json.dumps({"address": cluster.address, "nodes": len(alive)}), flush=True)
        sys.stdin.read()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
