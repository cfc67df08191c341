"""mpirun for the tests that start MPI jobs on this machine (mpi_distributed.py, remote_http.py)."""
import os
import subprocess

from checks import fail

# Open MPI in a container: no ptrace for the shared-memory single copy; no binding of 4 ranks to 2 cores.
OMPI_ENV = {"OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_hwloc_base_binding_policy": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpirun(ws, *apps, env=None, limit=300):
    """mpirun of `ws` with one or more app contexts (MPMD: ranks with arguments of their own), each
    (processes, [weightscope arguments]), in `env` (this process's by default). None, the failure
    recorded, when it outlives `limit` seconds: a hang is a failure, not a stuck CI job."""
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root"]
    for i, (n, args) in enumerate(apps):
        cmd += ([":"] if i else []) + ["-np", str(n), ws, *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=dict(env or os.environ, **OMPI_ENV))
    except subprocess.TimeoutExpired:
        fail(f"mpirun did not end within {limit} s: {' '.join(cmd)}")
        return None
