// The settings voxserve knows, declared once with what each means: the scalar options (file key,
// flag, VOXSERVE_* variable, default, bounds, description) and the shape of the YAML file. The
// loader (server_config.cc), --help and `voxserve config-reference` (docs/configuration.md) all
// read these, so they cannot disagree.
#pragma once

#include <span>

#include "core/options.h"
#include "core/yaml_schema.h"
#include "scheduler/scheduler_config.h"
#include "server/server_config.h"

namespace voxserve::server {

// The scalar options; each setter stores into `config`, which must outlive the table.
core::OptionTable BuildOptionTable(ServerConfig& config);

// models[].scheduling integer keys: the reader, the file schema, --help and the reference all
// use this table, so a new integer key is one line in config_schema.cc. `instances` (a number or
// auto) and the worker-placement keys are read by the loader on their own.
struct SchedulingKey {
  const char* name;
  int scheduler::SchedulerConfig::*field;
  const char* bounds;  // SchedulerConfig::Validate's range
  const char* description;
};
std::span<const SchedulingKey> SchedulingKeys();

// Every key the file may hold, documented (core::KeyDoc): the options of `table` plus the
// structured sections (models, voice_aliases, openai_voices).
core::YamlSchema ConfigFileSchema(const core::OptionTable& table);

}  // namespace voxserve::server
