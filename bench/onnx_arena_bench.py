#!/usr/bin/python3
"""ONNX Runtime's CPU memory arena for variable-length TTS (issue 13, item 8): the same Piper
graph served by four voxserve processes that differ only in the arena options (off, on, shrink,
and ORT's shrinkage after every Run), driven one request at a time, interleaved (each round
sends every text to every server in turn), over texts from a few words to a long sentence.
Prints per mode: the median latency and server CPU per sentence (and their ratio to `off`), and
the server's peak and resident memory (VmHWM; VmRSS after the warm-up and after the run).

Usage: bench/onnx_arena_bench.py [--build build] [--rounds 8] [--model PATH] [--without-long]
                                  [--cosyvoice BUNDLE]
The model defaults to bench/onnx/make_vits_graph.py's Piper-medium graph (random weights, real
size), built into $VOXSERVE_BENCH_DIR (default /tmp/voxserve-onnx-bench) when missing.
--cosyvoice BUNDLE serves a CosyVoice2 bundle instead (`make cosyvoice-bundle` writes one at real
dimensions), each server cloning the bundle's goldens/prompt.wav, over shorter texts (an
autoregressive request costs seconds per word on a CPU); its LLM decode and flow Euler loops run
in place (never shrunk), so the rule shows on its other graphs.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import requests

HERE = pathlib.Path(__file__).resolve().parent
# label -> the session options that differ. "shrink-all" is ORT's shrinkage after every Run.
MODES = {"off": "cpu_memory_arena: off", "on": "cpu_memory_arena: on",
         "shrink": "cpu_memory_arena: shrink",
         "shrink-all": "cpu_memory_arena: shrink, arena_keep_elements: 0"}
# Short to long (3 to ~60 words): what a chat reply's sentences look like, and the one long
# sentence that makes an arena keep its biggest blocks.
TEXTS = [
    "Yes, of course.",
    "The quick brown fox jumps over the lazy dog.",
    "Streaming speech synthesis sends each sentence as soon as it is ready, so the listener hears "
    "the first words while the rest are still being made.",
    "In the middle of the long afternoon, when the light had turned the colour of honey and the "
    "wind had dropped to nothing at all, the old ferryman pushed his boat away from the landing, "
    "looked once at the far bank, and began, slowly and without a word to anyone, to row across "
    "the wide and quiet river towards the town.",
    "Short again.",
]

# CosyVoice: 1 and 3 words. With random weights the LLM speaks until its maximum length (about
# 20 tokens per text token, 25 per second of audio), and on 2 cores that costs ~10 s of wall
# time per second of audio: "Yes." takes ~30 s, a 5-word sentence ~4 minutes.
COSYVOICE_TEXTS = ["Yes.", "Hello there, friend."]
PROMPT_TRANSCRIPT = "This is a short prompt recording."


def memory_kib(pid):
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    fields = dict(re.findall(r"^(VmHWM|VmRSS):\s+(\d+) kB", status, re.M))
    return int(fields["VmHWM"]), int(fields["VmRSS"])


def cpu_seconds(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, binary, model, mode, options, workdir, cosyvoice=False):
        config = pathlib.Path(workdir) / f"arena-{mode}.yaml"
        if cosyvoice:
            config.write_text(
                f"voices: {{dir: {pathlib.Path(workdir) / ('voices-' + mode)}}}\n"
                # One real-size request can outlast the default 60 s deadline on 2 cores.
                "limits: {request_timeout_ms: 900000, max_request_timeout_ms: 900000}\n"
                "models:\n"
                "  - id: vits\n"
                "    engine: cosyvoice\n"
                f"    options: {{path: {model}, {options}, max_active: 1}}\n")
        else:
            config.write_text(
                "models:\n"
                "  - id: vits\n"
                "    engine: piper\n"
                f"    options: {{model: {model}, {options}, intra_op_threads: 1}}\n"
                "    scheduling: {instances: 1, max_batch_size: 1}\n")
        self.mode = mode
        self.voice = "vits"
        self.log = open(pathlib.Path(workdir) / f"arena-{mode}.log", "w+")
        self.process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0",
                                         "--grpc-enabled", "false", "--config", str(config)],
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        self.url = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            self.log.seek(0)
            match = re.search(r"listening on (http://[0-9.]+:\d+)", self.log.read())
            if match:
                try:
                    if requests.get(match.group(1) + "/health/ready", timeout=2).ok:
                        self.url = match.group(1)
                        if cosyvoice:
                            self.voice = self.clone(model)
                        return
                except requests.RequestException:
                    pass
            time.sleep(0.1)
        self.log.seek(0)
        self.process.kill()
        sys.exit(f"voxserve ({mode}) did not become ready:\n{self.log.read()}")

    def clone(self, bundle):
        prompt = (pathlib.Path(bundle) / "goldens" / "prompt.wav").read_bytes()
        created = requests.post(self.url + "/v1/audio/voices", timeout=300,
                                data={"name": "arena", "model": "vits",
                                      "transcript": PROMPT_TRANSCRIPT},
                                files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
        created.raise_for_status()
        return created.json()["id"]

    def speak(self, text):
        started = time.perf_counter()
        cpu = cpu_seconds(self.process.pid)
        response = requests.post(self.url + "/v1/audio/speech", timeout=900, json={
            "model": "vits", "voice": self.voice, "input": text, "response_format": "pcm",
            "seed": 1, "stream": False})
        response.raise_for_status()
        return time.perf_counter() - started, cpu_seconds(self.process.pid) - cpu

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--model")
    parser.add_argument("--without-long", action="store_true",
                        help="leave out the long sentence: only the lengths an arena is kept for")
    parser.add_argument("--cosyvoice", metavar="BUNDLE", help="a CosyVoice2 bundle instead")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated subset of " + ", ".join(MODES) + " (off is needed)")
    args = parser.parse_args()
    modes = {mode: MODES[mode] for mode in args.modes.split(",")}
    texts = [t for t in TEXTS if not (args.without_long and len(t.split()) > 40)]
    if args.cosyvoice:
        texts = COSYVOICE_TEXTS
    binary = str(pathlib.Path(args.build) / "bin" / "voxserve")
    model = args.cosyvoice or args.model
    if not model:
        work = pathlib.Path(os.environ.get("VOXSERVE_BENCH_DIR", "/tmp/voxserve-onnx-bench"))
        model = str(work / "vits-medium.onnx")
        if not os.path.exists(model):
            work.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, str(HERE / "onnx" / "make_vits_graph.py"), "--out",
                            str(work), "--quality", "medium"], check=True)
    with tempfile.TemporaryDirectory() as workdir:
        servers = []
        try:
            for mode, options in modes.items():
                servers.append(Server(binary, model, mode, options, workdir,
                                      cosyvoice=bool(args.cosyvoice)))
            for server in servers:  # one pass of every text: the arenas see every length once
                for text in texts:
                    server.speak(text)
            warm = {s.mode: memory_kib(s.process.pid) for s in servers}
            latency = {mode: {i: [] for i in range(len(texts))} for mode in modes}
            cpu = {mode: [] for mode in modes}
            for _ in range(args.rounds):
                for i, text in enumerate(texts):
                    for server in servers:
                        wall, used = server.speak(text)
                        latency[server.mode][i].append(wall)
                        cpu[server.mode].append(used)
            final = {s.mode: memory_kib(s.process.pid) for s in servers}
        finally:
            for server in servers:
                server.stop()

    print(f"machine: {os.cpu_count()} cores; date: {time.strftime('%Y-%m-%d')}; load average: "
          f"{open('/proc/loadavg').read().split()[:3]}; model: {os.path.basename(model)}; "
          f"{args.rounds} rounds x {len(texts)} texts per mode, one request at a time, interleaved")
    words = [len(t.split()) for t in texts]
    print("| cpu_memory_arena | " + " | ".join(f"P50 ms ({w} words)" for w in words)
          + " | sum of P50 vs off | CPU ms/sentence | vs off | VmHWM MiB | VmRSS MiB warm -> end |")
    print("|---" * (len(texts) + 6) + "|")
    base_sum = sum(statistics.median(latency["off"][i]) for i in range(len(texts)))
    base_cpu = statistics.mean(cpu["off"])
    for mode in modes:
        p50 = [statistics.median(latency[mode][i]) for i in range(len(texts))]
        mean_cpu = statistics.mean(cpu[mode])
        print(f"| {mode} | " + " | ".join(f"{v * 1000:.1f}" for v in p50)
              + f" | {sum(p50) / base_sum:.3f} | {mean_cpu * 1000:.1f} | {mean_cpu / base_cpu:.3f}"
              f" | {final[mode][0] / 1024:.0f} | {warm[mode][1] / 1024:.0f} -> "
              f"{final[mode][1] / 1024:.0f} |")


if __name__ == "__main__":
    main()
