"""The documentation stays true: the configuration reference is what the server prints, the README
stays a front page, every docs page is reachable from the index, links resolve, and every example
marked runnable runs against a real server.

A block is runnable when the line before its fence is `<!-- runnable -->` (or
`<!-- runnable requires=TOOL -->`: skipped where TOOL, a command or a Python module, is missing).
Shell blocks run under bash with `set -e -o pipefail` and a curl that fails on HTTP errors; Python
blocks with Debian's python3. `localhost:8080` / `:50051` (or 127.0.0.1) point at the test
server's ports, voxctl and voxbench (beside the voxserve under test) are on the PATH and stand
for `build/bin/`, and the
blocks of one page run in order in one working folder that holds links to the repository's
top-level folders (so `proto/`, `bench/` resolve, and files the examples write land there).
"""
import difflib
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import VoxServer

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md"]
RUNNABLE = re.compile(r"^<!-- runnable(?: requires=(\S+))? -->$")
FENCE = re.compile(r"^```(\w*)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def relative(path):
    return str(path.relative_to(ROOT))


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            yield number, line


def anchors(path):
    """GitHub's heading anchors of a Markdown file."""
    seen = {}
    found = set()
    for _, line in prose_lines(path.read_text()):
        match = re.match(r"^#+ (.*)", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def runnable_blocks():
    blocks = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            marker = RUNNABLE.match(line.strip())
            if not marker:
                continue
            fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
            assert fence, f"{relative(page)}:{i + 1}: a runnable marker must stand before a fence"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            blocks.append(pytest.param(page, fence.group(1), marker.group(1),
                                       "\n".join(lines[i + 2:end]) + "\n",
                                       id=f"{relative(page)}:{i + 2}"))
    return blocks


def test_the_configuration_page_is_what_the_server_prints(voxserve_bin):
    printed = subprocess.run([voxserve_bin, "config-reference"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    page = (ROOT / "docs" / "configuration.md").read_text()
    if printed != page:
        diff = "".join(difflib.unified_diff(page.splitlines(True), printed.splitlines(True),
                                            "docs/configuration.md", "voxserve config-reference"))
        pytest.fail("docs/configuration.md is out of date; run\n"
                    "  build-asan/bin/voxserve config-reference > docs/configuration.md\n" +
                    diff[:6000])


def test_help_points_at_the_reference(voxserve_bin):
    shown = subprocess.run([voxserve_bin, "--help"], capture_output=True, text=True, timeout=60,
                           check=True).stdout
    assert "voxserve config-reference" in shown and "docs/configuration.md" in shown


def test_the_readme_is_a_front_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 160, "README.md is a front page: move details to docs/"
    first = re.search(r"```\w*\n(.*?)```", readme, re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make run", "make test"]


def test_every_docs_page_is_linked_from_the_index():
    index = (ROOT / "docs" / "README.md").read_text()
    linked = {target.split("#")[0] for target in LINK.findall(index)}
    for page in (ROOT / "docs").glob("*.md"):
        if page.name != "README.md":
            assert page.name in linked, f"docs/README.md does not link {page.name}"
    assert "docs/README.md" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("page", PAGES, ids=relative)
def test_relative_links_and_anchors_resolve(page):
    broken = []
    for number, line in prose_lines(page.read_text()):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{relative(page)}:{number}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{relative(page)}:{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


@pytest.fixture(scope="module")
def docs_server(voxserve_bin, tmp_path_factory):
    # Every listener the examples use: REST, gRPC and Wyoming (for voxctl's wyoming:// example).
    # The response cache on, for docs/response-cache.md's hit (the others' answers are the same);
    # a dictionaries directory for docs/pronunciation-dictionaries.md.
    dictionaries = tmp_path_factory.mktemp("dictionaries")
    server = VoxServer(voxserve_bin, ["--wyoming-enabled", "true", "--wyoming-port", "0",
                                      "--cache-enabled", "true",
                                      "--dictionaries-dir", str(dictionaries)]).start()
    server.grpc_target  # waits for the gRPC listener too
    server.wyoming_port  # noqa: B018 (and for Wyoming's)
    yield server
    assert server.stop() == 0, server.log()


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """One working folder per page, with links to the repository's top-level entries."""
    made = {}

    def of(page):
        if page not in made:
            folder = tmp_path_factory.mktemp(page.stem)
            for entry in ROOT.iterdir():
                if not entry.name.startswith("."):
                    (folder / entry.name).symlink_to(entry)
            made[page] = folder
        return made[page]

    return of


def available(tool):
    return shutil.which(tool) is not None or importlib.util.find_spec(tool) is not None


@pytest.mark.parametrize("page,language,requires,code", runnable_blocks())
def test_runnable_example(page, language, requires, code, docs_server, workdirs, voxserve_bin):
    if requires and not available(requires):
        pytest.skip(f"needs {requires}")
    http = f"127.0.0.1:{docs_server.port}"
    grpc = docs_server.grpc_target
    wyoming = f"127.0.0.1:{docs_server.wyoming_port}"
    for host in ("localhost", "127.0.0.1"):
        code = code.replace(f"{host}:8080", http).replace(f"{host}:50051", grpc)
        code = code.replace(f"{host}:10200", wyoming)
    bin_dir = os.path.dirname(os.path.abspath(voxserve_bin))
    code = re.sub(r"(?<![\w/.-])build/bin/", bin_dir + "/", code)
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:{os.environ['PATH']}",
               VOXSERVE_URL=f"http://{http}")
    folder = workdirs(page)
    if language in ("sh", "bash", "shell"):
        command = ["bash", "-e", "-o", "pipefail", "-c",
                   'curl() { command curl --fail-with-body "$@"; }\n' + code]
    elif language == "python":
        script = folder / "example.py"
        script.write_text(code)
        command = ["/usr/bin/python3", str(script)]
    else:
        pytest.fail(f"runnable blocks are sh or python, not {language!r}")
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, timeout=180)
    assert result.returncode == 0, (
        f"exit {result.returncode}\n--- code\n{code}\n--- stdout\n"
        f"{result.stdout.decode(errors='replace')[-3000:]}\n--- stderr\n"
        f"{result.stderr.decode(errors='replace')[-3000:]}")
