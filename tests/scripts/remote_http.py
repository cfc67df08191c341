#!/usr/bin/env python3
"""Remote checkpoints over HTTP, against real servers started here on 127.0.0.1.

1. nginx (Debian's) serving the Hugging Face Hub's two endpoints as static files: the file list
   (/api/models/ORG/REPO/revision/REV) and the files (/ORG/REPO/resolve/SHA/PATH), each fixture a
   repository. Through hf:// with HF_ENDPOINT pointing at it, every fixture gives the same
   inspect --json tensors, plan --json ranks and header-only findings as the local copy, fetching
   a few percent of its bytes (printed); opened again it comes from the header cache without a
   request; dequant of one expert, or of a few rows, equals the local result bit for bit and
   fetches about those bytes; a commit-pinned revision, a folder URL and a plain file URL open too; a
   redirect chain is followed; a repository behind a token refuses without HF_TOKEN and opens
   with it; the full-size sparse DeepSeek-V3 (163 shards) opens and says what it fetched.
2. A misbehaving server (Python's http.server, here): one that ignores Range, a 404 shard, a
   connection reset in the middle of a header, short reads, a 500 before success, a header that
   lies about its length: each a clear error naming the URL or a transparent retry, never a hang
   or a wrong answer.
3. Under mpirun (when the build has MPI: a third argument "mpi"), validate --values --distributed
   and stats --all --distributed of a remote checkpoint: each rank fetches its own share into a
   mirror of its own, so the job fetches about what one process does (not once per rank), and
   the results equal one process's; a rank whose fetch fails ends the whole job promptly.

usage: remote_http.py WEIGHTSCOPE FIXTURES [mpi]"""
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish, said  # noqa: E402
import mpi_launch  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
# The side files an open reads beside the weights (core/formats/remote_open.cpp kSideFiles).
SIDE_FILES = ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json", "hf_quant_config.json",
              "model.safetensors.index.json")
MPI = sys.argv[3:4] == ["mpi"]
SHA = "0123456789abcdef0123456789abcdef01234567"
FIXTURES = {"qwen3_moe": "hf/qwen3_moe", "qwen3_moe_fp8": "hf/qwen3_moe_fp8", "deepseek_v3": "hf/deepseek_v3", "mixtral": "hf/mixtral",
            "qwen3_vl_moe": "hf/qwen3_vl_moe", "kquants": "gguf/tiny-qwen3moe-kquants.gguf", "kquants_split": "gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf",
            # compressed-tensors int4: its weight_shape tensors are read at open, and kept in the cache
            "ct_w4a16": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "compressed_tensors", "w4a16")}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args, env=None, timeout=300):
    return subprocess.run([WS, *args], capture_output=True, text=True, env=env, timeout=timeout)


def files_of(rel):
    src = os.path.join(FX, rel)
    if os.path.isdir(src):
        return src, sorted(os.listdir(src))
    if "-00001-of-" in rel:  # a split set: all its parts
        d, stem = os.path.dirname(src), os.path.basename(src).split("-00001-of-")[0]
        return d, sorted(f for f in os.listdir(d) if f.startswith(stem + "-0") and "-of-" in f)
    return os.path.dirname(src), [os.path.basename(src)]


def git_blob_sha1(path):
    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sibling(src_dir, n, record):
    """A file of the Hub's listing; with `record`, as ?blobs=true gives it: size, git blob id, and
    for weights (stored in LFS on the Hub) the LFS record with the file's sha256."""
    s = {"rfilename": n}
    if record:
        path = os.path.join(src_dir, n)
        s["size"] = os.path.getsize(path)
        s["blobId"] = git_blob_sha1(path)
        if n.endswith((".safetensors", ".gguf")):
            s["lfs"] = {"size": s["size"], "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(), "pointerSize": 134}
    return s


def publish(www, repo, src_dir, names, sha=SHA, record=True):
    """Lays a repository out as the Hub's API and resolve endpoints (the API answer holding each
    file's size and digests unless `record` is False: the 688 GB sparse one is not hashed)."""
    api = os.path.join(www, "api/models", repo, "revision")
    os.makedirs(api, exist_ok=True)
    listing = {"id": repo, "sha": sha, "siblings": [sibling(src_dir, n, record) for n in names]}
    for rev in ("main", sha):
        with open(os.path.join(api, rev), "w") as f:
            json.dump(listing, f)
    res = os.path.join(www, repo, "resolve", sha)
    os.makedirs(res, exist_ok=True)
    for n in names:
        os.symlink(os.path.join(src_dir, n), os.path.join(res, n))
    # The Hub resolves a branch name too: resolve/main is the commit main names now.
    branch = os.path.join(www, repo, "resolve", "main")
    if os.path.lexists(branch):
        os.remove(branch)
    os.symlink(sha, branch)


def tensors_of(j):
    return [{k: v for k, v in t.items() if k != "file"} | {"file": os.path.basename(j["files"][t["file"]]["path"])} for t in j["tensors"]]


def findings_of(path, env, tmp):
    report = os.path.join(tmp, "v.json")
    if os.path.exists(report):
        os.remove(report)
    r = run("validate", path, "--skip-rules", "values", "--report", report, env=env)
    if not os.path.exists(report):
        return r.returncode, [f"no report: {r.stderr.strip()}"]
    return r.returncode, sorted((f["code"], f.get("tensor") or "", f["message"].replace(path, "")) for f in json.load(open(report))["findings"])


def access_count(log, port):
    """The requests nginx has logged, once it has logged every one it served so far. nginx writes a
    request's line just after its last byte goes out, so a client that has exited may be a line ahead
    of the log. One worker serves in order: a marker request made now is logged after all earlier
    ones, so waiting for the marker waits for them. Marker lines are not counted."""
    marker = f"/weightscope-log-marker-{time.monotonic_ns()}"
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy of the machine's
    try:
        direct.open(f"http://127.0.0.1:{port}{marker}", timeout=10).close()
    except urllib.error.HTTPError:
        pass  # a 404 is logged like any other request
    for _ in range(200):
        lines = open(log).read().splitlines() if os.path.exists(log) else []
        if any(marker in line for line in lines):
            return sum(1 for line in lines if "/weightscope-log-marker-" not in line)
        time.sleep(0.05)
    raise SystemExit("nginx did not log a marker request within 10 s")


def bytes_served(log, port, path_part):
    """The body bytes nginx has sent so far for requests whose path holds `path_part` (the combined
    log format: "GET PATH HTTP/1.1" STATUS BYTES), once every request so far is logged."""
    access_count(log, port)
    total = 0
    for line in open(log).read().splitlines():
        m = re.search(r'"GET (\S+) [^"]*" \d+ (\d+)', line)
        if m and path_part in m.group(1):
            total += int(m.group(2))
    return total


# ------------------------------------------------------------------------------------------ nginx
def start_nginx(tmp, www):
    port, gated_port, slow_port = free_port(), free_port(), free_port()
    conf = os.path.join(tmp, "nginx.conf")
    user = "user root;" if os.geteuid() == 0 else ""
    with open(conf, "w") as f:
        f.write(f"""{user}
worker_processes 1; daemon off; pid {tmp}/nginx.pid; error_log {tmp}/nginx-error.log;
events {{ worker_connections 64; }}
http {{
  access_log {tmp}/access.log; default_type application/octet-stream;
  client_body_temp_path {tmp}/cb; proxy_temp_path {tmp}/px; fastcgi_temp_path {tmp}/fc; uwsgi_temp_path {tmp}/uw; scgi_temp_path {tmp}/sc;
  server {{
    listen 127.0.0.1:{port}; root {www}; disable_symlinks off;
    location /hop1/ {{ rewrite ^/hop1/(.*)$ /hop2/$1 redirect; }}
    location /hop2/ {{ rewrite ^/hop2/(.*)$ /$1 redirect; }}
  }}
  server {{
    listen 127.0.0.1:{gated_port}; root {www};
    location / {{ if ($http_authorization != "Bearer secret-token") {{ return 401; }} }}
  }}
  server {{
    listen 127.0.0.1:{slow_port}; root {www}; limit_rate 256k;
  }}
}}
""")
    p = subprocess.Popen(["nginx", "-c", conf, "-p", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            socket.create_connection(("127.0.0.1", gated_port), 0.1).close()
            socket.create_connection(("127.0.0.1", slow_port), 0.1).close()
            return p, port, gated_port, slow_port
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise SystemExit("nginx did not start: " + p.stderr.read().decode())


def part_nginx(tmp):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    for repo, rel in FIXTURES.items():
        publish(www, "fixtures/" + repo, *files_of(rel))
    # a GGUF repository of several quantizations, of which hf://.../FILE picks one
    publish(www, "fixtures/two-ggufs", os.path.join(FX, "gguf"), ["tiny-qwen3moe-kquants.expected.gguf", "tiny-qwen3moe-kquants.gguf"])
    # the full-size DeepSeek-V3, written sparse (163 shards of real shapes)
    big = os.path.join(tmp, "deepseek-full")
    r = run("synth", "--like", "deepseek-v3", "--scheme", "fp8-block", "--size", "full", "--sparse", big)
    check(r.returncode == 0, f"synth full DeepSeek-V3: {r.stderr.strip()}")
    publish(www, "fixtures/deepseek-full", big, sorted(os.listdir(big)), record=False)
    nginx, port, gated, slow = start_nginx(tmp, www)
    try:
        env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}", XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        env.pop("HF_TOKEN", None)
        env["HOME"] = tmp  # no token file of the machine's
        log = os.path.join(tmp, "access.log")
        # libcurl is opened for a URL, not at start-up (core/io/curl_library.h): a local command
        # loads none of it, a remote one does (the dynamic loader's own account, LD_DEBUG=libs).
        # A sanitized build links it at start-up (core/CMakeLists.txt): only the second half there.
        def loads_curl(*args):
            r = subprocess.run([WS, *args], capture_output=True, text=True, env=dict(env, LD_DEBUG="libs"), timeout=300)
            return r.returncode, "libcurl.so" in r.stderr
        linked = "libcurl" in subprocess.run(["readelf", "-d", WS], capture_output=True, text=True).stdout
        rc, loaded = loads_curl("inspect", os.path.join(FX, "hf/qwen3_moe"), "--json")
        check(rc == 0 and (linked or not loaded), f"a local inspect loaded libcurl: exit {rc}, linked {linked}")
        rc, loaded = loads_curl("inspect", "hf://fixtures/qwen3_moe", "--json", "--no-cache")
        check(rc == 0 and loaded, f"a remote inspect did not load libcurl: exit {rc}")
        for repo, rel in FIXTURES.items():
            local = os.path.join(FX, rel)
            loc = f"hf://fixtures/{repo}"
            before = access_count(log, port)
            rl, rr = run("inspect", local, "--json"), run("inspect", loc, "--json", env=env)
            # One request a file (its header whole: the index says how long), the listing, and the
            # index and config.json asked for beside it (a 404 where the repository has none), the
            # other side files the listing names: nothing more, whatever the header lengths.
            names = files_of(rel)[1]
            weights = [n for n in names if n.endswith((".safetensors", ".gguf"))]
            side = [n for n in names if n in SIDE_FILES]
            want = len(weights) + 1 + len(side) + sum(n not in names for n in ("model.safetensors.index.json", "config.json"))
            want += repo == "ct_w4a16"  # and its weight_shape values, read at open: one range for them all
            made = access_count(log, port) - before
            check(made == want, f"{repo}: the first open made {made} requests, not {len(weights)} files + list + {len(side)} side files + index/config asked for")
            if rr.returncode != rl.returncode or rr.returncode not in (0, 1):
                fail(f"{repo}: inspect exit {rr.returncode} (local {rl.returncode}): {rr.stderr.strip()[:300]}")
                continue
            jl, jr = json.loads(rl.stdout), json.loads(rr.stdout)
            check(tensors_of(jl) == tensors_of(jr), f"{repo}: remote tensors differ from the local ones")
            check(jl["model"] == jr["model"] and jl["totals"] == jr["totals"], f"{repo}: model or totals differ")
            rem = jr["remote"]
            share = rem["bytes_fetched"] / rem["bytes"]
            print(f"{repo}: fetched {rem['bytes_fetched']:,} of {rem['bytes']:,} bytes ({100 * share:.2f}%) in {rem['requests']} requests")
            check(share < 0.05 or rem["bytes"] < 4_000_000, f"{repo}: fetched {100 * share:.1f}% of the checkpoint")
            check(all(f.get("url", "").startswith(f"http://127.0.0.1:{port}/fixtures/{repo}/resolve/{SHA}/") for f in jr["files"]), f"{repo}: file URLs")
            # Reopened: from the header cache; of a branch, after one request asking which commit
            # it names now; pinned to a commit, or offline, with none.
            for where, offline, asks in ((loc, False, 1), (f"{loc}@{SHA}", False, 0), (loc, True, 0)):
                if where != loc:
                    run("inspect", where, "--json", env=env)  # the pinned location is a cache entry of its own
                before = access_count(log, port)
                again = json.loads(run("inspect", where, "--json", env=dict(env, HF_HUB_OFFLINE="1") if offline else env).stdout)
                check(again["remote"]["from_cache"], f"{where}{' offline' if offline else ''}: reopening was not from the cache")
                requests = access_count(log, port) - before
                check(requests == asks, f"{where}{' offline' if offline else ''}: reopening from the cache made {requests} requests, not {asks}")
                check(tensors_of(again) == tensors_of(jl), f"{where}: reopened from the cache, the tensors differ")
            pl = run("plan", local, "--ep", "2", "--json")
            pr = run("plan", loc, "--ep", "2", "--json", env=env)
            if pl.returncode == 0:
                check(pr.returncode == 0 and json.loads(pl.stdout)["ranks"] == json.loads(pr.stdout)["ranks"], f"{repo}: plan differs (exit {pr.returncode}) {pr.stderr[:200]}")
            fl, fr = findings_of(local, None, tmp), findings_of(loc, env, tmp)
            check(fl[0] == fr[0] and [f[:2] for f in fl[1]] == [f[:2] for f in fr[1]], f"{repo}: header-only findings differ: {fl[1][:3]} vs {fr[1][:3]}")

        # The branch moves to another commit: the cached mirror of main is not used again; the
        # headers are read anew from the new commit's files, and that mirror is the cache then.
        moved = "fedcba9876543210fedcba9876543210fedcba98"
        publish(www, "fixtures/qwen3_moe", *files_of(FIXTURES["qwen3_moe"]), sha=moved)
        r = json.loads(run("inspect", "hf://fixtures/qwen3_moe", "--json", env=env).stdout)
        check(not r["remote"]["from_cache"] and r["remote"]["revision"] == moved and all(f"/resolve/{moved}/" in f["url"] for f in r["files"]),
              f"main moved to {moved}: from_cache {r['remote']['from_cache']}, revision {r['remote']['revision']}")
        r = json.loads(run("inspect", "hf://fixtures/qwen3_moe", "--json", env=env).stdout)
        check(r["remote"]["from_cache"] and r["remote"]["revision"] == moved, f"after the move, reopening: from_cache {r['remote']['from_cache']}")

        def remote_dequant(repo, rel, tensor, extra):
            """dequant of the local and the remote copy: (bytes fetched, the tensor's members) when
            both ran and gave the same bits, else None (the failure recorded)."""
            ol, orr = os.path.join(tmp, "l.npy"), os.path.join(tmp, "r.npy")
            a = run("dequant", os.path.join(FX, rel), tensor, *extra, "--out", ol)
            b = run("dequant", f"hf://fixtures/{repo}", tensor, *extra, "--out", orr, env=env)
            if a.returncode or b.returncode:
                fail(f"dequant {repo} {tensor} {extra}: exit {a.returncode}/{b.returncode}: {b.stderr.strip()[:300]}")
                return None
            check(np.array_equal(np.load(ol).view(np.uint32), np.load(orr).view(np.uint32)), f"dequant {repo} {tensor} {extra}: remote values differ")
            j = json.loads(run("inspect", os.path.join(FX, rel), "--json").stdout)
            logical = next(t["logical"] for t in j["tensors"] if t["name"] == tensor)
            return int(b.stdout.split("fetched ")[1].split(" bytes")[0]), [t for t in j["tensors"] if t["logical"] == logical]

        # dequant of one expert: the local bytes, bit for bit, for about that expert's bytes
        for repo, rel, tensor, expert in [("kquants", "gguf/tiny-qwen3moe-kquants.gguf", "blk.1.ffn_down_exps.weight", 3),
                                          ("qwen3_moe_fp8", "hf/qwen3_moe_fp8", "model.layers.1.mlp.experts.5.up_proj.weight", -1)]:
            got = remote_dequant(repo, rel, tensor, ["--expert", str(expert)] if expert >= 0 else [])
            if not got:
                continue
            fetched, members = got
            want = sum(t["bytes"] // (t["shape"][0] if expert >= 0 else 1) for t in members)
            print(f"dequant {repo} {tensor} expert {expert}: fetched {fetched:,} bytes for {want:,} bytes of the tensor")
            check(want <= fetched <= want + (64 << 10), f"dequant {repo}: fetched {fetched} bytes, the selection holds {want}")
        # dequant --rows: the local rows bit for bit, for the bytes of those rows alone - a GGUF
        # expert's three rows, and two FP8 rows with the one 128-row block of scales they share
        for repo, rel, tensor, extra in [("kquants", "gguf/tiny-qwen3moe-kquants.gguf", "blk.1.ffn_down_exps.weight", ["--expert", "3", "--rows", "10:13"]),
                                         ("qwen3_moe_fp8", "hf/qwen3_moe_fp8", "model.layers.1.mlp.experts.2.up_proj.weight", ["--rows", "3:5"])]:
            got = remote_dequant(repo, rel, tensor, extra)
            if not got:
                continue
            fetched, members = got
            weight = next(t for t in members if t["name"] == tensor)
            first, end = map(int, extra[-1].split(":"))
            row_bytes = weight["bytes"] // int(np.prod(weight["shape"][:-1]))
            want = (end - first) * row_bytes + sum(t["bytes"] // t["shape"][0] for t in members if t is not weight)  # one row of block scales
            whole = sum(t["bytes"] for t in members)
            print(f"dequant {repo} {tensor} {' '.join(extra)}: fetched {fetched:,} bytes for {want:,} bytes of those rows ({whole:,} in the tensor)")
            check(want <= fetched <= want + (64 << 10) and fetched < whole // 8, f"dequant {repo} {extra}: fetched {fetched} bytes, the rows hold {want}")
        # stats of every tensor fetches what it reads: the same numbers as the local copy, never zeros
        a, b = run("stats", os.path.join(FX, "hf/qwen3_moe"), "--all"), run("stats", "hf://fixtures/qwen3_moe", "--all", env=env)
        check(a.returncode == b.returncode == 0 and a.stdout.splitlines()[1:] == [l for l in b.stdout.splitlines()[1:] if not l.startswith("fetched ")],
              f"stats --all remote: exit {b.returncode}: {b.stderr.strip()[:200]}")

        # validate --values: the value rules fetch every tensor, and find what they find locally
        report = os.path.join(tmp, "vv.json")
        r = run("validate", "hf://fixtures/qwen3_moe_fp8", "--values", "--report", report, env=env)
        rv = sorted((f["code"], f.get("tensor") or "") for f in json.load(open(report))["findings"]) if os.path.exists(report) else None
        r2 = run("validate", os.path.join(FX, "hf/qwen3_moe_fp8"), "--report", report)
        lv = sorted((f["code"], f.get("tensor") or "") for f in json.load(open(report))["findings"])
        check(r.returncode == r2.returncode and rv == lv and any(c.startswith("WS-V") for c in json.load(open(report))["rules_run"]),
              f"validate --values remote: exit {r.returncode}, {len(rv or [])} findings against {len(lv)}: {r.stderr.strip()[:200]}")
        r = run("validate", "hf://fixtures/qwen3_moe", "--values", "--max-fetch", "1MiB", env=env)
        check(r.returncode == 2 and "more than the budget of 1048576" in r.stderr, f"validate --values over --max-fetch: exit {r.returncode}: {r.stderr.strip()[:200]}")
        r = run("validate", "hf://fixtures/qwen3_moe_fp8", env=env)
        check("value rules are left out" in r.stderr, f"validate of a remote checkpoint without --values: {r.stderr.strip()[:200]}")

        # diff of the remote FP8 checkpoint against the local BF16 one: the local diff's numbers
        a = run("diff", os.path.join(FX, "hf/qwen3_moe"), os.path.join(FX, "hf/qwen3_moe_fp8"), "--json")
        b = run("diff", os.path.join(FX, "hf/qwen3_moe"), "hf://fixtures/qwen3_moe_fp8", "--json", env=env)
        strip = lambda out: [{k: v for k, v in t.items()} for t in json.loads(out)["tensors"]] if out else None
        check(a.returncode == b.returncode == 0 and strip(a.stdout) == strip(b.stdout), f"diff against a remote side: exit {b.returncode}: {b.stderr.strip()[:200]}")
        if MPI:
            part_distributed(tmp, env, log, port)
        part_shared_mirror(tmp, env, slow)
        r = run("load", "hf://fixtures/qwen3_moe", "--device", "host", env=env)
        check(r.returncode != 0 and "download the checkpoint" in r.stderr, f"load of a remote checkpoint: exit {r.returncode}: {r.stderr.strip()[:200]}")

        # the GUI opens a URL too, and its preview fetches the tile's tensor (no GUI in a Qt-less build)
        if "--screenshot" in run("--help").stdout:
            for view in ("tree", "preview", "histogram"):
                png = os.path.join(tmp, f"remote-{view}.png")
                r = run("--screenshot", png, "--view", view, "hf://fixtures/qwen3_moe_fp8",
                        env=dict(env, QT_QPA_PLATFORM="offscreen", WEIGHTSCOPE_NO_DIALOGS="1"))
                check(r.returncode == 0 and os.path.getsize(png) > 10000, f"GUI {view} of a remote checkpoint: exit {r.returncode}: {said(r.stderr)}")

        # other location forms: a pinned revision, a folder and a file by URL, a redirect chain
        base = f"http://127.0.0.1:{port}/fixtures"
        scratch = os.path.join(tmp, "scratch")  # where --no-cache makes its temporary mirrors
        os.makedirs(scratch)
        r = run("inspect", "hf://fixtures/two-ggufs", "--no-cache", env=dict(env, TMPDIR=scratch))
        check(r.returncode == 2 and "unrelated GGUF files" in r.stderr, f"a repository of two GGUFs: exit {r.returncode}: {r.stderr.strip()[:200]}")
        for loc in (f"hf://fixtures/qwen3_moe@{SHA}", "hf://fixtures/two-ggufs/tiny-qwen3moe-kquants.gguf", "hf://fixtures/kquants_split/tiny-qwen3moe-kquants-00002-of-00002.gguf", f"{base}/qwen3_moe/resolve/{SHA}/", f"{base}/qwen3_moe/resolve/{SHA}/model.safetensors.index.json",
                    f"{base}/kquants/resolve/{SHA}/tiny-qwen3moe-kquants.gguf", f"http://127.0.0.1:{port}/hop1/fixtures/kquants/resolve/{SHA}/tiny-qwen3moe-kquants.gguf"):
            r = run("inspect", loc, "--json", "--no-cache", env=dict(env, TMPDIR=scratch))
            n = len(json.loads(r.stdout)["tensors"]) if r.returncode == 0 else -1
            check(n > 0, f"{loc}: exit {r.returncode}, {n} tensors: {r.stderr.strip()[:200]}")
        check(not os.listdir(scratch), f"--no-cache left a mirror behind: {os.listdir(scratch)}")

        # The local Hugging Face cache (huggingface_hub's layout: refs/main names the commit,
        # snapshots/COMMIT/FILE links into blobs/): hf:// is read there with no request, pinned or
        # by branch, offline too; a snapshot missing a shard is read from the Hub instead.
        def hub_cache(home, repo, rel, drop=None):
            root = os.path.join(home, "hub", "models--" + repo.replace("/", "--"))
            shutil.rmtree(root, ignore_errors=True)
            src, names = files_of(rel)
            os.makedirs(os.path.join(root, "refs"))
            open(os.path.join(root, "refs", "main"), "w").write(SHA)
            for n in names:
                os.makedirs(os.path.join(root, "blobs"), exist_ok=True)
                blob = os.path.join(root, "blobs", "blob-" + n)
                if n != drop:  # a download cut short: the link is there, its blob is not
                    os.symlink(os.path.join(src, n), blob)
                snap = os.path.join(root, "snapshots", SHA)
                os.makedirs(snap, exist_ok=True)
                os.symlink(os.path.join("..", "..", "blobs", "blob-" + n), os.path.join(snap, n))
            return os.path.join(root, "snapshots", SHA)
        home = os.path.join(tmp, "hf-home")
        henv = dict(env, HF_HOME=home, XDG_CACHE_HOME=os.path.join(tmp, "cache-hub-test"))
        snap = hub_cache(home, "fixtures/qwen3_moe", FIXTURES["qwen3_moe"])
        local = json.loads(run("inspect", os.path.join(FX, FIXTURES["qwen3_moe"]), "--json").stdout)
        for where, extra in (("hf://fixtures/qwen3_moe", {}), (f"hf://fixtures/qwen3_moe@{SHA}", {}),
                             ("hf://fixtures/qwen3_moe", {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})):
            before = access_count(log, port)
            r = run("inspect", where, "--json", env=dict(henv, **extra))
            made = access_count(log, port) - before
            doc = json.loads(r.stdout) if r.returncode in (0, 1) else None
            check(doc is not None and made == 0 and tensors_of(doc) == tensors_of(local) and any(snap in n for n in doc["notes"]),
                  f"{where} {extra}: from the local Hub cache: exit {r.returncode}, {made} requests, notes {doc and doc['notes']}, {r.stderr.strip()[:200]}")
        shards = [n for n in files_of(FIXTURES["qwen3_moe"])[1] if n.endswith(".safetensors")]
        hub_cache(home, "fixtures/qwen3_moe", FIXTURES["qwen3_moe"], drop=shards[-1])
        before = access_count(log, port)
        r = run("inspect", "hf://fixtures/qwen3_moe", "--json", "--no-cache", env=henv)
        made = access_count(log, port) - before
        check(r.returncode in (0, 1) and made > 0 and tensors_of(json.loads(r.stdout)) == tensors_of(local),
              f"a snapshot missing {shards[-1]}: exit {r.returncode}, {made} requests (the Hub should have been asked)")

        # validate --hub: a local copy held to the Hub's record (sizes, LFS sha256, git blob sha1).
        def verify(path, *args, environ=env):
            r = run("validate", path, "--rules", "hub", "--format", "json", "--report", os.path.join(tmp, "hub.json"), *args, env=environ)
            doc = json.load(open(os.path.join(tmp, "hub.json"))) if os.path.exists(os.path.join(tmp, "hub.json")) and r.returncode in (0, 1) else {"findings": []}
            if os.path.exists(os.path.join(tmp, "hub.json")):
                os.remove(os.path.join(tmp, "hub.json"))
            return r, [(f["code"], os.path.basename(f.get("file", "")), f["message"]) for f in doc["findings"]]
        src, names = files_of(FIXTURES["qwen3_moe"])
        copy = os.path.join(tmp, "verify-copy")
        def fresh_copy():
            shutil.rmtree(copy, ignore_errors=True)
            os.makedirs(copy)
            for n in names:
                shutil.copyfile(os.path.join(src, n), os.path.join(copy, n))
        fresh_copy()
        r, found = verify(copy, "--hub", "hf://fixtures/qwen3_moe")
        check(r.returncode == 0 and not [f for f in found if f[0] != "WS-H005"], f"a clean copy against the Hub: exit {r.returncode}, {found}, {r.stderr.strip()[:300]}")
        shard = sorted(n for n in names if n.endswith(".safetensors"))[1]
        with open(os.path.join(copy, shard), "r+b") as f:  # one byte inside a tensor, the header intact
            f.seek(os.path.getsize(os.path.join(copy, shard)) - 100)
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ 0x40]))
        r, found = verify(copy, "--hub", "hf://fixtures/qwen3_moe")
        check(r.returncode == 1 and [(c, f) for c, f, m in found] == [("WS-H001", shard)] and "sha256" in found[0][2],
              f"one flipped byte in {shard}: exit {r.returncode}, {found}")
        fresh_copy()
        os.truncate(os.path.join(copy, shard), os.path.getsize(os.path.join(copy, shard)) - 1000)
        r, found = verify(copy, "--hub", "hf://fixtures/qwen3_moe")
        check(r.returncode == 1 and [(c, f) for c, f, m in found] == [("WS-H001", shard)] and "1,000 missing" in found[0][2], f"{shard} cut short: {found}")
        fresh_copy()
        os.remove(os.path.join(copy, shard))
        open(os.path.join(copy, "model-extra.safetensors"), "wb").write(b"\0" * 16)
        r, found = verify(copy, "--hub", "hf://fixtures/qwen3_moe")
        codes = sorted((c, f) for c, f, m in found)
        check(r.returncode == 1 and codes == [("WS-H002", shard), ("WS-H003", "model-extra.safetensors")], f"a shard missing and one extra: {codes}")
        # No integrity record: named, not passed; a bare --hub outside a cache snapshot is a usage error.
        r, found = verify(big, "--hub", "hf://fixtures/deepseek-full")
        check(r.returncode == 1 and found and all(c == "WS-H004" and "gave no sha256" in m for c, f, m in found)
              and sum(f.endswith(".safetensors") for c, f, m in found) == 163 and len(found) == len(os.listdir(big)),
              f"a Hub answer without sha256: exit {r.returncode}, {len(found)} findings, {found[:2]}")
        r = run("validate", copy, "--hub", env=env)
        check(r.returncode == 2 and "not in a Hugging Face cache snapshot" in r.stderr, f"bare --hub outside a snapshot: exit {r.returncode}, {r.stderr.strip()[:200]}")
        # A cache snapshot knows its repository and commit: --hub needs no argument there.
        snap = hub_cache(home, "fixtures/qwen3_moe", FIXTURES["qwen3_moe"])
        r, found = verify(snap, "--hub", environ=henv)
        check(r.returncode == 0 and not [f for f in found if f[0] != "WS-H005"], f"bare --hub in a snapshot: exit {r.returncode}, {found}, {r.stderr.strip()[:300]}")

        # a token-protected endpoint
        genv = dict(env, HF_ENDPOINT=f"http://127.0.0.1:{gated}")
        r = run("inspect", "hf://fixtures/qwen3_moe", "--no-cache", env=genv)
        check(r.returncode == 2 and "HF_TOKEN" in r.stderr and "401" in r.stderr, f"gated without a token: exit {r.returncode}: {r.stderr.strip()[:200]}")
        r = run("inspect", "hf://fixtures/qwen3_moe", "--no-cache", "--json", env=dict(genv, HF_TOKEN="secret-token"))
        check(r.returncode == 0 and len(json.loads(r.stdout)["tensors"]) > 0, f"gated with HF_TOKEN: exit {r.returncode}: {r.stderr.strip()[:200]}")

        # the full-size sparse DeepSeek-V3
        t0 = time.time()
        before = access_count(log, port)
        r = run("inspect", "hf://fixtures/deepseek-full", "--json", env=env)
        made = access_count(log, port) - before
        shards = len([n for n in os.listdir(big) if n.endswith(".safetensors")])
        check(made == shards + 3, f"deepseek-full: {made} requests, not {shards} shards + list + index + config")
        if r.returncode != 0:
            fail(f"deepseek-full: exit {r.returncode}: {r.stderr.strip()[:300]}")
        else:
            jr = json.loads(r.stdout)
            jl = json.loads(run("inspect", big, "--json").stdout)
            rem = jr["remote"]
            check(len(jr["files"]) == 163 and tensors_of(jr) == tensors_of(jl), f"deepseek-full: {len(jr['files'])} files, tensors equal {tensors_of(jr) == tensors_of(jl)}")
            print(f"deepseek-full (163 shards, {rem['bytes']:,} bytes): fetched {rem['bytes_fetched']:,} bytes in {rem['requests']} requests, "
                  f"{time.time() - t0:.1f} s")
    finally:
        nginx.terminate()
        nginx.wait(10)


# ------------------------------------------------------------------------------------ under mpirun
def part_shared_mirror(tmp, env, slow_port):
    """Two processes validating the same location at once share its cached mirror: both find what
    the local copy has, and the mirror keeps only headers once both are done. The server sends
    256 KiB/s a connection, so each process spends seconds fetching tensor bytes into the shared
    files; the second starts once the first has its headers. Unlocked, the first to finish gave its
    fetched bytes back (punched holes) while the other still read them: it saw zeros."""
    repo, local = "qwen3_moe_fp8", os.path.join(FX, "hf/qwen3_moe_fp8")
    loc = f"hf://fixtures/{repo}"
    senv = dict(env, HF_ENDPOINT=f"http://127.0.0.1:{slow_port}", XDG_CACHE_HOME=os.path.join(tmp, "shared-cache"))
    root = os.path.join(tmp, "shared-cache", "weightscope", "remote")
    cmd = [WS, "validate", loc, "--values", "--format", "json"]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=senv)
    deadline = time.time() + 60
    while time.time() < deadline and first.poll() is None and not any(
            os.path.exists(os.path.join(root, d, "weightscope-remote.json")) for d in (os.listdir(root) if os.path.isdir(root) else []) if ".partial-" not in d):
        time.sleep(0.02)
    second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=senv)
    # The case is about two processes at once: the first must still be fetching when the second
    # has started (at 256 KiB/s it needs seconds for the tensor bytes), or nothing was shared.
    overlapped = first.poll() is None
    outs = [p.communicate(timeout=300) for p in (first, second)]
    check(overlapped, f"two processes on one cached mirror: the first had exited ({first.returncode}) before the second started")

    def findings(out):
        return sorted((f["code"], f.get("tensor") or "", f["message"]) for f in json.loads(out)["findings"]) if out.strip() else None

    want = run("validate", local, "--values", "--format", "json")
    for label, p, (out, err) in (("first", first, outs[0]), ("second", second, outs[1])):
        check(p.returncode == want.returncode and findings(out) == findings(want.stdout),
              f"two processes on one cached mirror: the {label} one exited {p.returncode} (local {want.returncode}) with findings "
              f"{(findings(out) or [])[:3]} against {(findings(want.stdout) or [])[:3]}: {said(err)}")
    mirrors = [os.path.join(root, d) for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    kept = sum(os.stat(os.path.join(m, f)).st_blocks * 512 for m in mirrors for f in os.listdir(m))
    tensor_bytes = json.loads(run("inspect", local, "--json").stdout)["totals"]["bytes"]
    print(f"two processes on one cached mirror of {loc}: {len(mirrors)} mirror(s), {kept:,} bytes on disk after both ({tensor_bytes:,} tensor bytes)")
    check(len(mirrors) == 1 and kept < tensor_bytes / 4, f"after both, the cache holds {len(mirrors)} mirrors and {kept:,} bytes on disk")


def part_distributed(tmp, env, log, port):
    repo, local = "qwen3_moe_fp8", os.path.join(FX, "hf/qwen3_moe_fp8")
    loc = f"hf://fixtures/{repo}"
    # leak checking off as in mpi_distributed (Open MPI's components outlive MPI_Finalize)
    menv = dict(env, ASAN_OPTIONS="detect_leaks=0", XDG_CACHE_HOME=os.path.join(tmp, "mpi-cache"))

    def mpirun(*apps):
        return mpi_launch.mpirun(WS, *apps, env=menv)

    def findings(doc):
        return sorted((f["code"], f.get("tensor") or "", f["message"]) for f in doc["findings"])

    # one process, from a cold cache of its own: what it finds and what it fetches
    before = bytes_served(log, port, f"/fixtures/{repo}/")
    one = run("validate", loc, "--values", "--format", "json", env=dict(menv, XDG_CACHE_HOME=os.path.join(tmp, "one-cache")))
    single = bytes_served(log, port, f"/fixtures/{repo}/") - before
    # three ranks, each from a cold cache of its own
    before = bytes_served(log, port, f"/fixtures/{repo}/")
    r = mpirun((3, ["validate", loc, "--values", "--distributed", "--format", "json"]))
    job = bytes_served(log, port, f"/fixtures/{repo}/") - before
    if r is None:
        return
    if one.returncode not in (0, 1) or r.returncode != one.returncode:
        fail(f"validate --values --distributed of {loc}: exit {r.returncode} (one process {one.returncode}): {said(r.stderr)} {said(one.stderr)}")
        return
    lv = run("validate", local, "--values", "--format", "json")
    check(findings(json.loads(r.stdout)) == findings(json.loads(one.stdout)) and [f[:2] for f in findings(json.loads(one.stdout))] == [f[:2] for f in findings(json.loads(lv.stdout))],
          f"validate --values --distributed of {loc}: the findings differ from one process's, or from the local copy's")
    tensor_bytes = json.loads(run("inspect", local, "--json").stdout)["totals"]["bytes"]
    print(f"validate --values of {loc} ({tensor_bytes:,} tensor bytes): one process fetched {single:,} bytes, 3 ranks {job:,} bytes together")
    # each rank fetches its own share and its own headers (a few kB each); fetching every tensor
    # on every rank would be three times one process's bytes
    check(single >= tensor_bytes and job < single * 1.3, f"3 ranks fetched {job:,} bytes together, one process {single:,}")
    caches = sorted(d for d in os.listdir(os.path.join(tmp, "mpi-cache", "weightscope")))
    check(caches == ["remote-rank-0", "remote-rank-1", "remote-rank-2"], f"the ranks' mirrors: {caches}")

    # stats --all --distributed: the local numbers, every rank fetching what it reads
    a, b = run("stats", local, "--all", "--json"), mpirun((3, ["stats", loc, "--all", "--json", "--distributed"]))
    if b is not None:
        tensors = lambda out: json.loads(out)["tensors"] if out.strip() else None
        check(a.returncode == b.returncode == 0 and tensors(a.stdout) == tensors(b.stdout), f"stats --all --distributed of {loc}: exit {b.returncode}: {said(b.stderr)}")

    # a rank whose fetch is refused (a budget of 1 kB) ends the job: every process exits, non-zero,
    # and that rank's error is said
    t0 = time.time()
    r = mpirun((1, ["validate", loc, "--values", "--distributed"]), (1, ["validate", loc, "--values", "--distributed", "--max-fetch", "1KiB"]),
               (1, ["validate", loc, "--values", "--distributed"]))
    if r is not None:
        check(r.returncode != 0 and "(rank 1)" in r.stderr and "more than the budget of 1024" in r.stderr,
              f"a rank whose fetch failed: exit {r.returncode} in {time.time() - t0:.1f} s: {said(r.stderr)}")


# ------------------------------------------------------------------------------ a misbehaving server
class Faults(http.server.BaseHTTPRequestHandler):
    root = ""
    seen = {}
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, BrokenPipeError):
            pass

    def do_GET(self):
        try:
            self.answer()
        except (ConnectionError, BrokenPipeError):
            pass  # the client hung up on purpose (a server that ignores Range)

    def answer(self):
        mode, _, rel = self.path.lstrip("/").partition("/")
        with Faults.lock:
            n = Faults.seen.get(self.path, 0)
            Faults.seen[self.path] = n + 1
        path = os.path.join(Faults.root, rel)
        if not os.path.isfile(path) or (mode == "flaky" and n == 0):
            code = 404 if not os.path.isfile(path) else 500
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = open(path, "rb").read()
        rng = self.headers.get("Range")
        if mode == "norange" or not rng:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        a, b = rng.split("=")[1].split("-")
        a, b = int(a), min(int(b), len(data) - 1)
        if mode == "short":
            b = min(b, a + 99)  # an honest Content-Range, but less than asked
        body = data[a:b + 1]
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {a}-{b}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "reset" and n == 0:  # the connection dies inside the header
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)


def part_faults(tmp):
    root = os.path.join(tmp, "faulty")
    shutil.copytree(os.path.join(FX, "hf/qwen3_moe"), os.path.join(root, "qwen3_moe"))
    os.remove(os.path.join(root, "qwen3_moe", "model-00003-of-00004.safetensors"))  # the index still names it
    single = os.path.join(FX, "hf/qwen3_moe_fp8/model.safetensors")
    shutil.copy(single, os.path.join(root, "model.safetensors"))
    with open(single, "rb") as f:
        raw = bytearray(f.read())
    raw[0:8] = (len(raw) * 2).to_bytes(8, "little")  # a header length past the end of the file
    with open(os.path.join(root, "lying.safetensors"), "wb") as f:
        f.write(raw)
    Faults.root = root
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Faults)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache-faults"))
    try:
        local = json.loads(run("inspect", single, "--json").stdout)
        cases = [
            ("norange", "/norange/model.safetensors", 2, "ignores Range"),
            ("404 shard", "/plain/qwen3_moe/model.safetensors.index.json", 2, "404"),
            ("reset mid-header", "/reset/model.safetensors", 0, None),
            ("short reads", "/short/model.safetensors", 2, "short read"),
            ("500 then success", "/flaky/model.safetensors", 0, None),
            ("lying header length", "/plain/lying.safetensors", 2, "past the end"),
        ]
        for label, path, want_rc, words in cases:
            t0 = time.time()
            r = run("inspect", base + path, "--json", "--no-cache", env=env, timeout=120)
            took = time.time() - t0  # reported, not asserted: a hang is the run's 120-s timeout's and CTest's to catch
            ok = r.returncode == want_rc
            if want_rc == 0 and ok:
                ok = tensors_of(json.loads(r.stdout)) == tensors_of(local)
            if words:
                ok = ok and words in r.stderr and base in r.stderr
            check(ok, f"{label}: exit {r.returncode} in {took:.1f} s: {r.stderr.strip()[:300]}")
    finally:
        server.shutdown()


with tempfile.TemporaryDirectory() as tmp:
    if shutil.which("nginx"):
        part_nginx(tmp)
    else:
        fail("nginx is not installed (scripts/install-deps.sh installs nginx-light)")
    part_faults(tmp)

finish()
