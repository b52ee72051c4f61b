// Offline subcommands of the voxserve binary that inspect a model instead of serving:
//   voxserve check-model DIR     validate a CosyVoice bundle against its manifest
//   voxserve verify-bundle DIR   run the C++ stages on the bundle's goldens, max error per stage
#pragma once

namespace voxserve::server {

bool IsModelCommandLine(int argc, const char* const* argv);
// Exit code: 0 valid / all implemented stages within tolerance, 1 problems found, 2 usage.
int RunModelCommand(int argc, const char* const* argv);

}  // namespace voxserve::server
