#!/usr/bin/env python3
"""The SkyPilot task files `nubo-cost schedule --emit skypilot` writes, read by SkyPilot itself.

    skypilot_test.py NUBO_COST SNAPSHOT_DIR

Run by the Python of a venv with `skypilot` installed (tests/cost/CMakeLists.txt makes it). With
no network and no cloud credentials: HOME is a fresh folder whose ~/.sky/catalogs hold the
SkyPilot catalogs nubo embeds (lib/cost/snapshot/skypilot), which SkyPilot reads as its cached
copies. A queue over the embedded catalog places jobs on several clouds (on demand, spot, more
than one node); every file must load with sky.Task.from_yaml, and SkyPilot's own catalog must
agree with it: the instance type's accelerators, the region, spot and its recovery, the nodes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

QUEUE = {
    "jobs": [
        {"name": "aws-pretrain", "workload": {"params": "1B", "tokens": "30B"},
         "deadline": "5d", "nodes": "1-2", "provider": "aws", "gpu": "A100",
         "command": "python train.py", "nubo": True},
        {"name": "gcp-sweep", "workload": {"flops": 2e19, "checkpoint_size": "2G"},
         "deadline": "6d", "interruptible": True, "provider": "gcp", "command": "python sweep.py"},
        {"name": "lambda-finetune", "workload": {"params": "7B", "tokens": "1B", "zero": "auto"},
         "deadline": "6d", "provider": "lambda", "command": "python ft.py"},
        {"name": "azure-eval", "workload": {"flops": 5e18}, "deadline": "6d",
         "provider": "azure", "command": "python eval.py"},
        {"name": "anywhere", "workload": {"flops": 1e19, "checkpoint_size": "1G"},
         "deadline": "6d", "interruptible": True, "command": "python any.py"},
        {"name": "two-nodes", "workload": {"params": "3B", "tokens": "10B", "zero": "auto", "batch": 512,
                                      "seq_len": 2048},
         "deadline": "6d", "nodes": 2, "provider": "aws", "command": "python big.py",
         "nubo": True, "setup": "pip install -r requirements.txt"},
    ]
}


def main() -> int:
    nubo_cost, snapshot = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nubo-sky-")
    try:
        home = os.path.join(work, "home")
        for name in os.listdir(snapshot):
            cloud = name[:-len(".csv")]
            catalogs = os.path.join(home, ".sky", "catalogs", "v8", cloud)
            os.makedirs(catalogs)
            shutil.copy(os.path.join(snapshot, name), os.path.join(catalogs, "vms.csv"))
        env = dict(os.environ, HOME=home, NUBO_CATALOG_CACHE=os.path.join(work, "cache"))
        project = os.path.join(work, "project")  # SkyPilot checks that a workdir exists
        os.makedirs(project)
        QUEUE["jobs"][-1]["workdir"] = project
        with open(os.path.join(work, "queue.json"), "w") as f:
            json.dump(QUEUE, f)
        out = os.path.join(work, "sky")
        done = subprocess.run([nubo_cost, "schedule", os.path.join(work, "queue.json"), "--json",
                               "--emit", "skypilot", out], env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            print(done.stdout, done.stderr, file=sys.stderr)
            return 1
        schedule = {j["name"]: j for j in json.loads(done.stdout)["jobs"]}

        os.environ["HOME"] = home  # SkyPilot reads its catalogs from ~/.sky
        import sky
        from sky import catalog

        files = sorted(f for f in os.listdir(out) if f.endswith(".yaml"))
        readme = open(os.path.join(out, "README.md")).read()
        checked = 0
        for name, job in schedule.items():
            if job["placement"] == "unplaced":
                print(f"{name} was not placed: {job['reason']}", file=sys.stderr)
                return 1
            if f"{name}.yaml" not in files:
                # Only for a cloud SkyPilot does not launch on, and the README says so.
                assert f"- {name}: on " in readme, (name, readme)
                continue
            task = sky.Task.from_yaml(os.path.join(out, f"{name}.yaml"))
            (resources,) = list(task.resources)
            estimate = job["estimate"]
            assert task.name == name, task.name
            assert task.num_nodes == estimate["nodes"], (name, task.num_nodes)
            assert str(resources.cloud).lower() == estimate["provider"], (name, resources.cloud)
            cloud = estimate["provider"]
            # SkyPilot's own catalog: the region exists, and the instance type has exactly the
            # accelerators the file asks for.
            catalog.validate_region_zone(resources.region, None, clouds=cloud)
            expected = catalog.get_accelerators_from_instance_type(resources.instance_type,
                                                                   clouds=cloud)
            assert expected == resources.accelerators, (name, expected, resources.accelerators)
            spot = job["placement"] == "spot"
            assert resources.use_spot == spot, (name, resources.use_spot)
            if spot:
                assert resources.job_recovery["strategy"] == "FAILOVER", resources.job_recovery
            run = task.run if isinstance(task.run, str) else ""
            assert QUEUE_COMMANDS[name] in run, (name, run)
            if name in NUBO_JOBS:
                assert "nubo-run --nnodes \"$SKYPILOT_NUM_NODES\"" in run, run
            queued = next(j for j in QUEUE["jobs"] if j["name"] == name)
            assert (task.setup or "").strip() == queued.get("setup", ""), (name, task.setup)
            assert task.workdir == queued.get("workdir"), (name, task.workdir)
            checked += 1
        assert checked >= 4, f"only {checked} files checked"
        print(f"skypilot_test: {checked} task files loaded and checked by SkyPilot "
              f"{sky.__version__}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


QUEUE_COMMANDS = {j["name"]: j["command"] for j in QUEUE["jobs"]}
NUBO_JOBS = {j["name"] for j in QUEUE["jobs"] if j.get("nubo")}

if __name__ == "__main__":
    sys.exit(main())
