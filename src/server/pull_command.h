// voxserve models pull REPO [--revision R] [--include PATTERN]... [--dir D] [--export BUNDLE]: a
// model repository from the Hugging Face hub (hub/model_pull.h) into the hub's cache, and
// optionally a folder; a CosyVoice checkpoint optionally exported into a bundle
// (bundle_export.h); prints the folder that `models[].path` takes. docs/models.md.
#pragma once

namespace voxserve::server {

bool IsPullCommandLine(int argc, const char* const* argv);
// Exit codes: 0 pulled; 2 usage; 3 the hub wants a token (or another one); 4 no such
// repository, revision or matching file; 5 the hub unreachable or failing; 6 disk full (run
// again to resume); 7 a file's bytes did not match the hub's digest; 8 --export failed (the
// export image, or the bundle it wrote does not check out; 2 when docker cannot be started);
// 1 anything else.
int RunPullCommand(int argc, const char* const* argv);

}  // namespace voxserve::server
