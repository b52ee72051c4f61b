"""A local stand-in for the Hugging Face hub's HTTP API, as much of it as `voxserve models pull`
and the hub's official JavaScript client (@huggingface/hub's snapshotDownload) use:

  GET  /api/models/OWNER/NAME/revision/REV[?blobs=true]   commit and files (blobId, size, lfs)
  GET  /api/models/OWNER/NAME/tree/REV?recursive=true      the file tree
  POST /api/models/OWNER/NAME/paths-info/REV               one path's oid, size, lfs
  GET  /OWNER/NAME/resolve/REV/PATH                        a plain file, or a 302 to the CDN
  GET  /cdn/SHA256                                         an LFS file's bytes, with Range

Gated repositories answer 401 without a token and 403 to a token without access, as the hub
does; a missing repository or revision is a 404 with the hub's X-Error-Code. LFS files redirect to
the CDN under another host name ("localhost" instead of 127.0.0.1), so a client that sends its
token there is caught. Faults on demand: a connection cut halfway through a file, or corrupt
bytes. Every request is logged (method, path, Range, Authorization, Host)."""
import hashlib
import http.server
import json
import threading
import urllib.parse

GOOD_TOKEN = "hf_stand_in_reader"
NO_ACCESS_TOKEN = "hf_stand_in_no_access"


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    def __init__(self, files, lfs_paths=(), gated=False, revisions=("main",)):
        self.files = dict(files)  # path -> bytes
        self.lfs_paths = set(lfs_paths)
        self.gated = gated
        digest = hashlib.sha1(json.dumps(sorted((p, hashlib.sha256(d).hexdigest())
                                                for p, d in self.files.items())).encode())
        self.commit = digest.hexdigest()
        self.revisions = {name: self.commit for name in revisions}

    def entry(self, path):
        data = self.files[path]
        entry = {"rfilename": path, "blobId": git_blob_sha1(data), "size": len(data)}
        if path in self.lfs_paths:
            entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                            "pointerSize": 134}
        return entry

    def tree_entry(self, path):
        entry = self.entry(path)
        tree = {"type": "file", "path": path, "oid": entry["blobId"], "size": entry["size"]}
        if "lfs" in entry:
            tree["lfs"] = {"oid": entry["lfs"]["sha256"], "size": entry["size"], "pointerSize": 134}
        return tree


class HubStandIn:
    def __init__(self):
        self.repos = {}
        self.log = []
        self.cut_once = set()   # sha256s whose next download stops halfway
        self.corrupt = set()    # sha256s served with one byte changed
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def requests(self, kind=None):
        with self._lock:
            return [r for r in self.log if kind is None or kind in r["path"]]

    def blob(self, sha256):
        for repo in self.repos.values():
            for path, data in repo.files.items():
                if path in repo.lfs_paths and hashlib.sha256(data).hexdigest() == sha256:
                    return data
        return None

    def _handler(hub):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, body=b"", headers=None):
                if isinstance(body, (dict, list)):
                    body = json.dumps(body).encode()
                    headers = {"Content-Type": "application/json", **(headers or {})}
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _error(self, status, code, message):
                self._send(status, {"error": message}, {"X-Error-Code": code})

            def _repo(self, name, revision):
                """The repo and commit, or None after answering as the hub would."""
                repo = hub.repos.get(name)
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if repo is None:
                    # The hub answers 401 without a token (existence is not told) and 404 with.
                    if token:
                        self._error(404, "RepoNotFound", "Repository not found")
                    else:
                        self._error(401, "RepoNotFound", "Invalid username or password.")
                    return None
                if repo.gated and token != GOOD_TOKEN:
                    if token == NO_ACCESS_TOKEN:
                        self._error(403, "GatedRepo", "Access to this repository is restricted")
                    else:
                        self._error(401, "GatedRepo", "Access to this repository is restricted")
                    return None
                commit = repo.revisions.get(revision, revision if revision == repo.commit else None)
                if commit is None:
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                    return None
                return repo, commit

            def _record(self):
                with hub._lock:
                    hub.log.append({"method": self.command, "path": self.path,
                                    "range": self.headers.get("Range"),
                                    "auth": self.headers.get("Authorization"),
                                    "host": self.headers.get("Host")})

            def do_GET(self):
                self._record()
                url = urllib.parse.urlsplit(self.path)
                parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
                if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] in ("revision", "tree"):
                    found = self._repo(parts[2] + "/" + parts[3], parts[5])
                    if found is None:
                        return
                    repo, commit = found
                    if parts[4] == "tree":
                        return self._send(200, [repo.tree_entry(p) for p in sorted(repo.files)])
                    blobs = "blobs=true" in url.query
                    siblings = [repo.entry(p) if blobs else {"rfilename": p}
                                for p in sorted(repo.files)]
                    return self._send(200, {"id": parts[2] + "/" + parts[3], "sha": commit,
                                            "siblings": siblings, "private": False,
                                            "gated": "auto" if repo.gated else False})
                if len(parts) >= 5 and parts[2] == "resolve":
                    found = self._repo(parts[0] + "/" + parts[1], parts[3])
                    if found is None:
                        return
                    repo, commit = found
                    path = "/".join(parts[4:])
                    if path not in repo.files:
                        return self._error(404, "EntryNotFound", f"{path} does not exist")
                    entry = repo.entry(path)
                    headers = {"X-Repo-Commit": commit, "ETag": f'"{entry["blobId"]}"'}
                    if "lfs" in entry:
                        sha = entry["lfs"]["sha256"]
                        headers.update({"X-Linked-Etag": f'"{sha}"',
                                        "X-Linked-Size": str(entry["size"]),
                                        "Location": f"http://localhost:{hub.port}/cdn/{sha}"})
                        return self._send(302, b"", headers)
                    return self._bytes(repo.files[path], headers)
                if len(parts) == 2 and parts[0] == "cdn":
                    return self._cdn(parts[1])
                self._error(404, "EntryNotFound", "no such route")

            do_HEAD = do_GET

            def do_POST(self):
                self._record()
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                parts = [urllib.parse.unquote(p) for p in
                         urllib.parse.urlsplit(self.path).path.split("/")[1:]]
                if parts[:2] != ["api", "models"] or len(parts) < 6 or parts[4] != "paths-info":
                    return self._error(404, "EntryNotFound", "no such route")
                found = self._repo(parts[2] + "/" + parts[3], parts[5])
                if found is None:
                    return
                repo, _ = found
                if "json" in self.headers.get("Content-Type", ""):
                    paths = json.loads(body).get("paths", [])
                else:
                    paths = urllib.parse.parse_qs(body).get("paths", [])
                self._send(200, [repo.tree_entry(p) for p in paths if p in repo.files])

            def _cdn(self, sha):
                data = hub.blob(sha)
                if data is None:
                    return self._error(404, "EntryNotFound", "no such blob")
                if sha in hub.corrupt:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                with hub._lock:
                    cut = sha in hub.cut_once
                    hub.cut_once.discard(sha)
                # The CDN names its objects with an ETag of its own, as S3 and CloudFront do.
                self._bytes(data, {"ETag": f'"{hashlib.md5(data).hexdigest()}"'}, cut=cut)

            def _bytes(self, data, headers, cut=False):
                """The file, or the part a Range asks for (bytes=A- or bytes=A-B), as the hub
                and its CDN answer; `cut`: half of it, then the connection goes."""
                start, end = 0, len(data) - 1
                asked = self.headers.get("Range", "")
                if asked.startswith("bytes="):
                    first, _, last = asked[6:].partition("-")
                    start = int(first)
                    end = min(int(last), end) if last else end
                    if start >= len(data):
                        return self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                body = data[start:end + 1]
                self.send_response(206 if asked else 200)
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(body)))
                if asked:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command == "HEAD":
                    return
                if cut:
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.wfile.write(body)

        return Handler
