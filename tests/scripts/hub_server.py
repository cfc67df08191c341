"""A Hugging Face Hub-shaped HTTP server on 127.0.0.1 for benchmarks and the GUI test of Verify Against Hub: the model API weightscope reads
(/api/models/ORG/REPO/revision/REV: sha and siblings), the tree API hf-mem reads
(/api/models/ORG/REPO/tree/REV?recursive=true) and the files (/ORG/REPO/resolve/REV/PATH, ranges
answered 206), every answer held back by a fixed delay that stands for a network round trip.
HTTP/1.1 with keep-alive, one thread a connection; it counts the requests it answers."""
import hashlib
import http.server
import json
import os
import re
import socketserver
import threading
import time

SHA = "0123456789abcdef0123456789abcdef01234567"


class HubServer:
    def __init__(self, repos, delay_s=0.0):
        """repos: {"ORG/REPO": folder}; every regular file in the folder is a file of the repository."""
        self.repos, self.delay, self.requests, self.lock, self.records = repos, delay_s, 0, threading.Lock(), {}
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body in one write, sent at once: otherwise Nagle holds the body back for
            # the client's delayed ACK (40 ms a request), a delay no real server adds.
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def answer(self, code, body, headers=()):
                self.send_response(code)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/__count":  # the bench asks how many requests were answered: not counted
                    return self.answer(200, str(hub.count()).encode())
                with hub.lock:
                    hub.requests += 1
                time.sleep(hub.delay)
                path = self.path.split("?")[0]
                m = re.match(r"^/api/models/([^/]+/[^/]+)/(revision|tree)/[^/]+$", path)
                if m and m.group(1) in hub.repos:
                    folder = hub.repos[m.group(1)]
                    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
                    if m.group(2) == "revision":
                        doc = {"sha": SHA, "siblings": [hub.sibling(folder, n, "blobs=true" in self.path) for n in names]}
                    else:
                        doc = [{"type": "file", "path": n, "size": os.path.getsize(os.path.join(folder, n))} for n in names]
                    return self.answer(200, json.dumps(doc).encode(), [("Content-Type", "application/json")])
                m = re.match(r"^/([^/]+/[^/]+)/resolve/[^/]+/(.+)$", path)
                if not m or m.group(1) not in hub.repos or not os.path.isfile(os.path.join(hub.repos[m.group(1)], m.group(2))):
                    return self.answer(404, b"not found")
                f = os.path.join(hub.repos[m.group(1)], m.group(2))
                size = os.path.getsize(f)
                rng = re.match(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                start, end = (int(rng.group(1)), min(size - 1, int(rng.group(2)) if rng.group(2) else size - 1)) if rng else (0, size - 1)
                with open(f, "rb") as fh:
                    fh.seek(start)
                    body = fh.read(end - start + 1)
                etag = [("ETag", f'"{size}-{int(os.path.getmtime(f))}"'), ("Accept-Ranges", "bytes")]
                if rng:
                    return self.answer(206, body, [("Content-Range", f"bytes {start}-{end}/{size}")] + etag)
                return self.answer(200, body, etag)

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def sibling(self, folder, name, record):
        """A file as the model API lists it; with ?blobs=true its size, git blob id (small files)
        and LFS sha256 (weights), computed once."""
        s = {"rfilename": name}
        if not record:
            return s
        with self.lock:
            if name not in self.records:
                path = os.path.join(folder, name)
                r = {"size": os.path.getsize(path)}
                if name.endswith((".safetensors", ".gguf")):
                    h = hashlib.sha256()
                    with open(path, "rb") as f:
                        for chunk in iter(lambda: f.read(8 << 20), b""):
                            h.update(chunk)
                    r["lfs"] = {"size": r["size"], "sha256": h.hexdigest(), "pointerSize": 134}
                else:
                    data = open(path, "rb").read()
                    r["blobId"] = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                self.records[name] = r
            return {**s, **self.records[name]}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self):
        with self.lock:
            return self.requests


if __name__ == "__main__":
    # python hub_server.py DELAY_S ORG/REPO=FOLDER...: serves until killed; prints its port first.
    import sys
    server = HubServer(dict(a.split("=", 1) for a in sys.argv[2:]), float(sys.argv[1]))
    print(server.port, flush=True)
    server.httpd.serve_forever()
