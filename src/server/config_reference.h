// `voxserve config-reference`: prints docs/configuration.md, the reference of every
// configuration key (type, default, bounds, flag and environment variable, meaning, an example),
// made from the schema the file is checked against (server/config_schema.h) and the engines'
// option lists (engine/engine_options.h). tests/integration/test_docs.py fails while the
// checked-in page differs from what this prints.
#pragma once

#include <string>

namespace voxserve::server {

// The whole page, in Markdown.
std::string ConfigReferenceMarkdown();

bool IsConfigReferenceCommandLine(int argc, const char* const* argv);
// Prints the page on stdout. Exit code: 0, or 2 for arguments it does not take.
int RunConfigReference(int argc, const char* const* argv);

}  // namespace voxserve::server
