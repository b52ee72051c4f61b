"""Static checks of deploy/: every YAML lints, each Kustomize overlay renders and every rendered
object validates against the Kubernetes API schemas, the rendered objects have what
deploy/README.md promises, the metric the autoscalers scale on is one a running voxserve exports,
nginx accepts its config, compose accepts its files, and voxserve accepts the configs the image
and the cluster ship."""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest
import requests
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBE = DEPLOY / "kubernetes"
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from conftest import VoxServer  # noqa: E402

VOXSERVE_BIN = os.environ.get("VOXSERVE_BIN")
NODE_DEPS = os.environ.get("DEPLOY_NODE_DEPS")  # node_modules of tests/deploy/package.json


def run(*args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)


def documents(text):
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """overlay name -> (path of the rendered YAML, its objects by kind: voxserve's where a
    component adds another of the kind)."""
    out = {}
    folder = tmp_path_factory.mktemp("rendered")
    for overlay in ("cpu", "gpu", "gpu-postgres"):
        result = run("kubectl", "kustomize", str(KUBE / "overlays" / overlay))
        assert result.returncode == 0, result.stderr
        path = folder / f"{overlay}.yaml"
        path.write_text(result.stdout)
        kinds = {}
        for d in documents(result.stdout):  # voxserve's own first (kustomize sorts by name)
            kinds.setdefault(d["kind"], d)
        out[overlay] = (path, kinds)
    return out


def test_every_yaml_file_lints():
    files = sorted(str(p) for p in DEPLOY.rglob("*.y*ml"))
    assert len(files) >= 10
    result = run("yamllint", "-c", str(DEPLOY / ".yamllint"), "--strict", *files)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rendered_objects_validate_against_the_api_schemas(rendered):
    if not NODE_DEPS:
        pytest.skip("DEPLOY_NODE_DEPS unset (the npm ci fixture installs kubernetes-models)")
    files = [str(rendered[o][0]) for o in rendered] + [
        str(KUBE / "keda" / "scaledobject.yaml"), str(KUBE / "prometheus-adapter" / "rules.yaml")]
    # Node resolves an ES module's imports from its own folder (NODE_PATH is for CommonJS), so
    # the script runs from beside the installed node_modules.
    script = pathlib.Path(NODE_DEPS).parent / "validate_objects.mjs"
    shutil.copy(ROOT / "tests" / "deploy" / "validate_objects.mjs", script)
    result = run("node", str(script), *files)
    assert result.returncode == 0, result.stdout + result.stderr
    valid = re.search(r"(\d+) objects valid, 0 problems", result.stdout)
    assert valid and int(valid.group(1)) >= 14, result.stdout  # 6 per overlay, KEDA, adapter


def test_each_overlay_has_every_object_kind(rendered):
    for overlay, (_, kinds) in rendered.items():
        assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                "ConfigMap", "ServiceMonitor"} <= set(kinds), overlay


def container(deployment):
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    return c


def test_probes_ports_and_security_are_as_documented(rendered):
    image_config = yaml.safe_load((DEPLOY / "docker" / "voxserve.yaml").read_text())
    drain_s = image_config["drain_timeout_ms"] / 1000
    for overlay, (_, kinds) in rendered.items():
        pod = kinds["Deployment"]["spec"]["template"]["spec"]
        c = container(kinds["Deployment"])
        assert c["startupProbe"]["httpGet"]["path"] == "/health/ready"
        assert c["readinessProbe"]["httpGet"]["path"] == "/health/ready"
        assert c["livenessProbe"]["httpGet"]["path"] == "/health/live"
        startup_budget = c["startupProbe"]["periodSeconds"] * c["startupProbe"]["failureThreshold"]
        assert startup_budget >= 300, f"{overlay}: model load + warm-up need minutes"
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        assert ports == {"http": 8080, "grpc": 9090}
        assert ports["http"] == image_config["http"]["port"]
        assert ports["grpc"] == image_config["grpc"]["port"]
        service_ports = {p["name"]: p["port"] for p in kinds["Service"]["spec"]["ports"]}
        assert service_ports == {"http": 8080, "grpc": 9090}
        pre_stop = c["lifecycle"]["preStop"]["sleep"]["seconds"]
        assert pod["terminationGracePeriodSeconds"] > drain_s + pre_stop, overlay
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert c["securityContext"]["readOnlyRootFilesystem"] is True
        assert c["securityContext"]["allowPrivilegeEscalation"] is False
        assert c["resources"]["requests"]["cpu"] and c["resources"]["limits"]["memory"]
        assert pod["affinity"]["podAntiAffinity"]
        mounts = {m["mountPath"] for m in c["volumeMounts"]}
        assert {"/etc/voxserve", "/models", "/voices", "/tmp"} <= mounts
        config_volume = next(v for v in pod["volumes"] if v["name"] == "config")
        assert config_volume["configMap"]["name"] == kinds["ConfigMap"]["metadata"]["name"]
    gpu = container(rendered["gpu"][1]["Deployment"])
    assert gpu["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert gpu["image"].endswith(":cuda")
    cpu = container(rendered["cpu"][1]["Deployment"])
    assert "nvidia.com/gpu" not in cpu["resources"]["limits"]
    assert cpu["image"].endswith(":cpu")


def test_the_postgres_overlay_shares_one_voice_registry(tmp_path):
    """overlays/postgres: the replicas read the DSN from the overlay's Secret, which names the
    in-cluster PostgreSQL's Service; every object validates like the others'."""
    result = run("kubectl", "kustomize", str(KUBE / "overlays" / "postgres"))
    assert result.returncode == 0, result.stderr
    objects = documents(result.stdout)
    deployment = next(d for d in objects if d["kind"] == "Deployment")
    c = container(deployment)
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["VOXSERVE_VOICES_BACKEND"] == "postgres"
    dsn_file = env["VOXSERVE_VOICES_POSTGRES_DSN_FILE"]
    mount = next(m for m in c["volumeMounts"] if dsn_file.startswith(m["mountPath"] + "/"))
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"]
                  if v["name"] == mount["name"])
    secret = next(d for d in objects if d["kind"] == "Secret")
    assert volume["secret"]["secretName"] == secret["metadata"]["name"]
    assert mount["mountPath"] + "/" + volume["secret"]["items"][0]["path"] == dsn_file
    statefulset = next(d for d in objects if d["kind"] == "StatefulSet")
    service = next(d for d in objects if d["kind"] == "Service"
                   and d["metadata"]["name"] == statefulset["spec"]["serviceName"])
    dsn = secret["stringData"][volume["secret"]["items"][0]["key"]]
    assert f"host={service['metadata']['name']} " in dsn
    assert statefulset["spec"]["volumeClaimTemplates"]
    if NODE_DEPS:
        rendered_file = tmp_path / "postgres.yaml"
        rendered_file.write_text(result.stdout)
        script = pathlib.Path(NODE_DEPS).parent / "validate_objects.mjs"
        shutil.copy(ROOT / "tests" / "deploy" / "validate_objects.mjs", script)
        checked = run("node", str(script), str(rendered_file))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert re.search(r"(\d+) objects valid, 0 problems", checked.stdout), checked.stdout


def hpa_metric_names(hpa):
    kinds = {m["type"] for m in hpa["spec"]["metrics"]}
    assert "Pods" in kinds and kinds <= {"Resource", "Pods"}
    return [m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]


@pytest.fixture(scope="module")
def scraped_metrics():
    """A running voxserve's /metrics text after one synthesis."""
    if not VOXSERVE_BIN:
        pytest.skip("VOXSERVE_BIN unset")
    server = VoxServer(VOXSERVE_BIN).start()
    try:
        r = requests.post(server.url + "/v1/audio/speech", timeout=30,
                          json={"model": "tts-1", "voice": "alloy", "input": "Scale me."})
        assert r.status_code == 200
        return requests.get(server.url + "/metrics", timeout=10).text
    finally:
        server.stop()


@pytest.fixture(scope="module")
def exported_metrics(scraped_metrics):
    """Metric names with samples on a running voxserve's /metrics after one synthesis."""
    return {line.split("{")[0].split(" ")[0] for line in scraped_metrics.splitlines()
            if line and not line.startswith("#")}


@pytest.fixture(scope="module")
def metric_families(scraped_metrics):
    """Every family voxserve registers (its # TYPE lines: streaming-engine families too, with no
    samples on espeak), and the GPU families, registered only where NVML is present."""
    names = {line.split()[2] for line in scraped_metrics.splitlines()
             if line.startswith("# TYPE ")}
    gpu = (ROOT / "src" / "core" / "gpu_monitor.cc").read_text()
    return names | set(re.findall(r'"(voxserve_gpu_[a-z_]+)"', gpu))


def test_autoscaling_metrics_are_ones_voxserve_exports(rendered, exported_metrics):
    """Every per-pod metric an HPA names is one the Prometheus Adapter serves, and every series
    the adapter (or KEDA) reads is one a running voxserve exports."""
    wanted = set()
    for _, kinds in rendered.values():
        wanted.update(hpa_metric_names(kinds["HorizontalPodAutoscaler"]))
    adapter = documents((KUBE / "prometheus-adapter" / "rules.yaml").read_text())[0]
    rules = yaml.safe_load(adapter["data"]["config.yaml"])["rules"]
    served, read = set(), set()
    for rule in rules:
        series = re.match(r"\s*'?([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
        assert re.match(rule["name"]["matches"], series), rule  # the rule names what it reads
        read.add(series)
        served.add(rule["name"]["as"])
    assert {"voxserve_requests_in_flight", "voxserve_queue_depth",
            "voxserve_time_to_first_audio_p95_seconds"} <= wanted
    assert wanted <= served, wanted - served
    keda = documents((KUBE / "keda" / "scaledobject.yaml").read_text())[0]
    for trigger in keda["spec"]["triggers"]:
        if trigger["type"] == "prometheus":
            read.update(re.findall(r"(voxserve_[a-z_]+)", trigger["metadata"]["query"]))
    assert read <= exported_metrics, read - exported_metrics


def test_nginx_accepts_its_config(tmp_path):
    # Upstream names resolve only inside the compose network; loopback stands in for them.
    conf = (DEPLOY / "compose" / "nginx.conf").read_text()
    conf = re.sub(r"voxserve-[ab]", "127.0.0.1", conf)
    (tmp_path / "nginx.conf").write_text(conf)
    result = run("nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                 "-e", "stderr")
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_compose_accepts_its_files():
    compose = DEPLOY / "compose"
    for files in (["compose.yaml"], ["compose.yaml", "compose.gpu.yaml"],
                  ["compose.yaml", "compose.postgres.yaml"]):
        args = [a for f in files for a in ("-f", str(compose / f))]
        result = run("docker-compose", *args, "config")
        assert result.returncode == 0, result.stderr
        merged = yaml.safe_load(result.stdout)
        for name in ("voxserve-a", "voxserve-b"):
            service = merged["services"][name]
            assert service["healthcheck"]["start_period"]
            assert service["ulimits"]["nofile"]["soft"] >= 65536
            assert service["logging"]["options"]["max-size"]
            assert service["read_only"] is True
            if "compose.gpu.yaml" in files:
                (device,) = service["deploy"]["resources"]["reservations"]["devices"]
                assert device["capabilities"] == ["gpu"] and len(device["device_ids"]) == 1
            if "compose.postgres.yaml" in files:  # both replicas on the one database
                assert service["environment"]["VOXSERVE_VOICES_BACKEND"] == "postgres"
                dsn = service["environment"]["VOXSERVE_VOICES_POSTGRES_DSN"]
                assert "host=postgres " in dsn and "postgres" in merged["services"]


def test_the_one_box_compose_file_renders_with_wyoming_announced_on_the_hosts_network():
    result = run("docker-compose", "-f", str(DEPLOY / "compose" / "compose.single.yaml"), "config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert set(services) == {"voxserve", "models-pull"}
    service = services["voxserve"]
    assert service["network_mode"] == "host"  # mDNS does not leave a bridge network
    assert service["depends_on"] == {"models-pull": {"condition": "service_completed_successfully"}}
    environment = service["environment"]
    assert environment["VOXSERVE_WYOMING_ENABLED"] == "true"
    assert environment["VOXSERVE_WYOMING_ZEROCONF"] == "true"
    assert (environment["VOXSERVE_PORT"], environment["VOXSERVE_WYOMING_PORT"]) == ("8080", "10200")
    assert {v.split(":")[1] for v in service["volumes"] if isinstance(v, str)} >= {"/models", "/voices"} \
        or {v["target"] for v in service["volumes"] if isinstance(v, dict)} >= {"/models", "/voices"}
    assert service["read_only"] is True and service["healthcheck"]["start_period"]


def test_voxserve_serves_the_one_box_compose_environment():
    """The image's config with compose.single.yaml's environment (loopback and free ports here,
    announcing off: this test touches no real network) serves REST and Wyoming."""
    if not VOXSERVE_BIN:
        pytest.skip("VOXSERVE_BIN unset")
    compose = yaml.safe_load((DEPLOY / "compose" / "compose.single.yaml").read_text())
    environment = {name: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))
                   for name, value in compose["services"]["voxserve"]["environment"].items()}
    environment.update(VOXSERVE_HOST="127.0.0.1", VOXSERVE_WYOMING_ZEROCONF="false",
                       VOXSERVE_WYOMING_PORT="0")
    server = VoxServer(VOXSERVE_BIN, ["--config", str(DEPLOY / "docker" / "voxserve.yaml"),
                                      "--models", ""], env=environment).start()
    try:
        assert requests.get(server.url + "/health/ready", timeout=5).status_code == 200
        with socket.create_connection(("127.0.0.1", server.wyoming_port), timeout=30) as wyoming:
            wyoming.sendall(b'{"type": "describe"}\n')
            received = b""
            while b"\n" not in received:
                received += wyoming.recv(65536)
            assert json.loads(received.split(b"\n")[0])["type"] == "info"
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("config", ["docker/voxserve.yaml", "kubernetes/base/voxserve.yaml"])
def test_voxserve_accepts_the_shipped_config(config):
    if not VOXSERVE_BIN:
        pytest.skip("VOXSERVE_BIN unset")
    # The container paths (/models) do not exist here; loopback and free ports stand in.
    server = VoxServer(VOXSERVE_BIN, ["--config", str(DEPLOY / config), "--models", ""]).start()
    try:
        assert requests.get(server.url + "/health/ready", timeout=5).status_code == 200
    finally:
        server.stop()


def test_systemd_unit_verifies(tmp_path):
    if not VOXSERVE_BIN or not shutil.which("systemd-analyze"):
        pytest.skip("needs VOXSERVE_BIN and systemd-analyze")
    unit = (DEPLOY / "systemd" / "voxserve.service").read_text()
    unit = unit.replace("/usr/local/bin/voxserve", os.path.abspath(VOXSERVE_BIN))
    path = tmp_path / "voxserve.service"
    path.write_text(unit)
    result = run("systemd-analyze", "verify", str(path))
    problems = [l for l in (result.stdout + result.stderr).splitlines() if "voxserve.service" in l]
    assert result.returncode == 0 and not problems, result.stdout + result.stderr


MONITORING = DEPLOY / "monitoring"


def test_alert_rules_check_and_pass_their_promtool_tests():
    checked = run("promtool", "check", "rules", "alerts.yaml", cwd=MONITORING)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = run("promtool", "test", "rules", "alerts.test.yaml", cwd=MONITORING)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def dashboard_queries():
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    return dashboard, [target["expr"] for panel in dashboard["panels"]
                       for target in panel.get("targets", [])]


def series_names(expr):
    """The metric names a PromQL expression reads (voxserve's, the process's, Prometheus' up),
    histogram suffixes taken off."""
    names = set(re.findall(r"\b((?:voxserve|process)_[a-z_]+)\b", expr))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in names}


def test_dashboard_and_alerts_read_only_metrics_voxserve_registers(metric_families):
    _, queries = dashboard_queries()
    alerts = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    queries += [rule["expr"] for group in alerts["groups"] for rule in group["rules"]]
    read = set().union(*(series_names(q) for q in queries))
    # Histograms are registered under their base name; their series carry the suffixes.
    assert read <= metric_families, read - metric_families
    assert {"voxserve_stream_tokens_total", "voxserve_stream_vocoder_pending",
            "voxserve_time_to_first_audio_seconds"} <= read


def test_dashboard_queries_are_valid_promql(tmp_path):
    """Every panel's query, Grafana's variables given values, parsed by promtool (as recording
    rules), and the dashboard's panels with ids of their own on the Prometheus variable."""
    dashboard, queries = dashboard_queries()
    assert len(queries) >= 15
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
    concrete = [q.replace("$__rate_interval", "5m").replace("$model", ".*")
                .replace("$instance", ".*") for q in queries]
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query{i}", "expr": q} for i, q in enumerate(concrete)]}]}
    path = tmp_path / "dashboard-rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    checked = run("promtool", "check", "rules", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_gpu_overlay_fetches_its_model_once_and_waits_for_it(rendered):
    """overlays/gpu: a Job pulls, exports and checks the bundle onto the models volume; the
    replicas mount it read-only, wait for a bundle that checks out, and serve the path the Job
    wrote on CUDA; the autoscaler follows streams, queue and first audio; the Ingresses keep
    streaming and gRPC working."""
    for overlay in ("gpu", "gpu-postgres"):
        objects = documents(rendered[overlay][0].read_text())
        job = next(d for d in objects if d["kind"] == "Job")
        pod = job["spec"]["template"]["spec"]
        steps = {c["name"]: c for c in pod["initContainers"] + pod["containers"]}
        assert list(steps) == ["pull", "export", "check"]
        assert steps["pull"]["command"][:3] == ["voxserve", "models", "pull"]
        bundle = steps["export"]["args"][steps["export"]["args"].index("--out") + 1]
        assert steps["check"]["command"] == ["voxserve", "check-model", bundle]
        pvc = next(d for d in objects if d["kind"] == "PersistentVolumeClaim")
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
        claim = pvc["metadata"]["name"]
        assert {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
                if "persistentVolumeClaim" in v} == {"models": claim}

        deployment = next(d for d in objects if d["kind"] == "Deployment")
        spec = deployment["spec"]["template"]["spec"]
        models = next(v for v in spec["volumes"] if v["name"] == "models")
        assert models == {"name": "models",
                          "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}
        (wait,) = spec["initContainers"]
        assert f"voxserve check-model {bundle}" in " ".join(wait["command"])
        config_map = next(d for d in objects if d["kind"] == "ConfigMap")
        config = yaml.safe_load(config_map["data"]["voxserve.yaml"])
        cosyvoice = next(m for m in config["models"] if m["engine"] == "cosyvoice")
        assert cosyvoice["options"]["path"] == bundle
        assert cosyvoice["options"]["execution_provider"] == "cuda"
        assert cosyvoice["warmup"], "readiness only after warm-up"

        hpa = next(d for d in objects if d["kind"] == "HorizontalPodAutoscaler")
        assert set(hpa_metric_names(hpa)) == {"voxserve_requests_in_flight",
                                              "voxserve_queue_depth",
                                              "voxserve_time_to_first_audio_p95_seconds"}
        ingresses = {d["metadata"]["name"]: d for d in objects if d["kind"] == "Ingress"}
        http = ingresses["voxserve"]["metadata"]["annotations"]
        assert http["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
        assert int(http["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 600
        grpc = ingresses["voxserve-grpc"]
        assert grpc["metadata"]["annotations"]["nginx.ingress.kubernetes.io/backend-protocol"] == "GRPC"
        backend = grpc["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
        assert backend["port"]["name"] == "grpc"
        assert any(d["kind"] == "PodDisruptionBudget" for d in objects)
    postgres = documents(rendered["gpu-postgres"][0].read_text())
    env = {e["name"]: e.get("value") for e in
           container(next(d for d in postgres if d["kind"] == "Deployment"))["env"]}
    assert env["VOXSERVE_VOICES_BACKEND"] == "postgres"


def test_voxserve_takes_the_gpu_config_up_to_its_missing_bundle(tmp_path):
    """The GPU overlay's config parses and every engine option is valid (a bad key or value
    would stop the server with exit 2): here the model then fails only for want of its bundle."""
    if not VOXSERVE_BIN:
        pytest.skip("VOXSERVE_BIN unset")
    server = VoxServer(VOXSERVE_BIN, [
        "--config", str(KUBE / "overlays" / "gpu" / "voxserve.yaml"),
        "--voices-dir", str(tmp_path / "voices")]).start(wait_ready=False)
    try:
        def cosyvoice():
            health = requests.get(server.url + "/health", timeout=5).json()
            return next(m for m in health["models"] if m["id"] == "cosyvoice2")
        deadline = time.monotonic() + 60
        while cosyvoice()["state"] != "failed" and time.monotonic() < deadline:
            time.sleep(0.1)
        model = cosyvoice()
        assert model["state"] == "failed", model
        assert "/models/cosyvoice2-bundle" in model["error"], model
    finally:
        server.stop()


DOCKER = DEPLOY / "docker"
# Every base image has these (glibc and the C++ runtime); the image ships everything else it links.
SYSTEM_LIBS = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
               "libresolv.so.2", "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgcc_s.so.1"}


def test_every_dockerfile_lints():
    """dockerfile-utils (the validator behind the VS Code Docker extension) finds no error and
    no warning in any Dockerfile, the stand-ins' included."""
    if not NODE_DEPS:
        pytest.skip("DEPLOY_NODE_DEPS unset (the npm ci fixture installs dockerfile-utils)")
    files = sorted(DOCKER.glob("*Dockerfile")) + sorted((ROOT / "tests/deploy/images").glob("*.Dockerfile"))
    assert len(files) >= 5
    lint = pathlib.Path(NODE_DEPS) / ".bin" / "dockerfile-utils"
    for path in files:
        result = run("node", str(lint), "lint", str(path))
        assert result.returncode == 0 and not result.stdout.strip(), f"{path}:\n{result.stdout}"


def cuda_env():
    result = run("bash", "-c", f"set -a; . {DOCKER / 'cuda.env'}; env -0")
    assert result.returncode == 0, result.stderr
    env = dict(item.split("=", 1) for item in result.stdout.split("\0") if "=" in item)
    return {key: value for key, value in env.items() if key.startswith("CUDA_")}


def needed(path):
    dynamic = run("readelf", "-d", str(path))
    assert dynamic.returncode == 0, dynamic.stderr
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic.stdout))


@pytest.fixture(scope="module")
def gpu_sdk(tmp_path_factory):
    """ONNX Runtime's CUDA package staged as build-image.sh --gpu stages it (fetched from NuGet
    on the first run, cached in third_party/onnxruntime/gpu)."""
    if not shutil.which("dotnet") and not os.environ.get("ONNXRUNTIME_ROOT"):
        pytest.skip("needs dotnet (scripts/fetch-onnxruntime.sh --gpu)")
    dest = tmp_path_factory.mktemp("gpu-sdk") / "onnxruntime"
    env = {k: v for k, v in os.environ.items() if k != "ONNXRUNTIME_ROOT"}
    result = subprocess.run([str(DOCKER / "stage-onnxruntime.sh"), "--gpu", str(dest)], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return dest


def test_the_cuda_base_provides_what_the_onnxruntime_gpu_package_links(gpu_sdk):
    """cuda.env's base image and library lists agree with the CUDA package the image ships:
    everything a shipped library links is glibc's, the C++ runtime's, shipped, the base's or the
    driver's; the base's CUDA major is the sonames'; and no listed library has gone stale."""
    cuda = cuda_env()
    runtime = set(cuda["CUDA_RUNTIME_LIBS"].split())
    driver = set(cuda["CUDA_DRIVER_LIBS"].split())
    shipped = {p.name for p in (gpu_sdk / "lib").iterdir()}
    assert {"libonnxruntime.so.1", "libonnxruntime_providers_cuda.so",
            "libonnxruntime_providers_shared.so"} <= shipped
    assert not any("tensorrt" in name for name in shipped)  # links TensorRT, never loaded
    linked = set()
    for lib in (gpu_sdk / "lib").iterdir():
        if not lib.is_symlink():
            linked |= needed(lib)
    assert linked <= SYSTEM_LIBS | shipped | runtime | driver, \
        linked - SYSTEM_LIBS - shipped - runtime - driver
    assert runtime | driver <= linked, (runtime | driver) - linked
    image = re.fullmatch(r"nvidia/cuda:(\d+)\.\d+\.\d+-(\w+)-runtime-ubuntu[\d.]+",
                         cuda["CUDA_RUNTIME_IMAGE"])
    assert image, cuda["CUDA_RUNTIME_IMAGE"]
    assert "libcudart.so." + image.group(1) in linked
    assert "libcublas.so." + image.group(1) in linked
    # cuDNN is opened at run time (no NEEDED entry): the base must be a cudnn variant, and the
    # provider must be one that asks for it.
    assert image.group(2) == "cudnn" and "libcudnn.so.9" in cuda["CUDA_LOADED_LIBS"]
    provider = (gpu_sdk / "lib" / "libonnxruntime_providers_cuda.so").read_bytes()
    assert b"cuDNN is not available" in provider and b"cuFFT" in provider
    assert int(cuda["CUDA_MIN_DRIVER"]) >= 580  # CUDA 13.0's minimum driver branch
    readme = (DEPLOY / "README.md").read_text()
    assert cuda["CUDA_RUNTIME_IMAGE"] in readme and f"driver {cuda['CUDA_MIN_DRIVER']}" in readme


def test_the_image_collects_the_cuda_provider_with_every_library_it_links(gpu_sdk, tmp_path):
    """collect-runtime.sh as the CUDA image's build stage runs it (ONNX Runtime's CUDA build on
    the library path): the providers beside the loaded libonnxruntime.so.1 are shipped, and every
    library a shipped file links is shipped too, glibc's or the CUDA base's."""
    if not VOXSERVE_BIN:
        pytest.skip("VOXSERVE_BIN unset")
    voxctl = pathlib.Path(VOXSERVE_BIN).with_name("voxctl")
    rootfs = tmp_path / "rootfs"
    result = run(str(DOCKER / "collect-runtime.sh"), str(rootfs), VOXSERVE_BIN, str(voxctl),
                 env={**os.environ, "LD_LIBRARY_PATH": str(gpu_sdk / "lib")})
    assert result.returncode == 0, result.stdout + result.stderr
    libdir = rootfs / "usr/local/lib/voxserve"
    shipped = {p.name for p in libdir.iterdir()}
    assert {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_shared.so"} <= shipped
    def release(lib):  # stripped, so compared by the symbol version it defines
        return set(re.findall(r"VERS_[\d.]+", run("readelf", "-V", str(lib)).stdout))
    assert release(libdir / "libonnxruntime.so.1") == {"VERS_1.31.0"}  # the CUDA build's
    assert release(gpu_sdk / "lib" / "libonnxruntime.so.1") == {"VERS_1.31.0"}
    cuda = cuda_env()
    allowed = SYSTEM_LIBS | shipped | set(cuda["CUDA_RUNTIME_LIBS"].split()) \
        | set(cuda["CUDA_DRIVER_LIBS"].split())
    for path in [*libdir.iterdir(), *(rootfs / "usr/local/bin").iterdir()]:
        missing = needed(path) - allowed
        assert not missing, f"{path.name} links {missing}, which the image lacks"


def test_the_image_builds_from_either_onnxruntime_route(gpu_sdk, tmp_path):
    """stage-onnxruntime.sh, the step both routes go through: an unpacked archive named by
    ONNXRUNTIME_ROOT is staged as given (links beside their target kept, none pointing out);
    a CPU SDK given for the CUDA image is refused, naming the fix; and the path it fills is the
    one the Dockerfile's build stage checks and configures with."""
    archive = tmp_path / "onnxruntime-linux-x64-gpu"  # the release archive's layout
    shutil.copytree(gpu_sdk, archive, symlinks=True)
    staged = tmp_path / "staged"
    env = {**os.environ, "ONNXRUNTIME_ROOT": str(archive)}
    result = run(str(DOCKER / "stage-onnxruntime.sh"), "--gpu", str(staged), env=env)
    assert result.returncode == 0, result.stderr
    assert f"from ONNXRUNTIME_ROOT={archive}" in result.stdout
    for lib in (staged / "lib").iterdir():
        assert not lib.is_symlink() or "/" not in os.readlink(lib)
    assert (staged / "lib/libonnxruntime.so.1").resolve().parent == staged / "lib"
    assert (staged / "include/onnxruntime_cxx_api.h").is_file()

    cpu = tmp_path / "onnxruntime-linux-x64"
    shutil.copytree(archive, cpu, symlinks=True)
    (cpu / "lib/libonnxruntime_providers_cuda.so").unlink()
    env["ONNXRUNTIME_ROOT"] = str(cpu)
    result = run(str(DOCKER / "stage-onnxruntime.sh"), "--gpu", str(tmp_path / "refused"), env=env)
    assert result.returncode != 0
    assert "is not a CUDA build of ONNX Runtime" in result.stderr and "-gpu archive" in result.stderr

    dockerfile = (DOCKER / "Dockerfile").read_text()
    build_script = (DOCKER / "build-image.sh").read_text()
    assert "ENV ORT=/src/deploy/docker/onnxruntime" in dockerfile
    assert "test -e $ORT/lib/libonnxruntime.so" in dockerfile
    assert "-DONNXRUNTIME_ROOT=$ORT" in dockerfile
    assert "sdk=deploy/docker/onnxruntime" in build_script
    assert "third_party/onnxruntime" in (ROOT / ".dockerignore").read_text().splitlines()
