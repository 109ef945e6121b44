// The web dashboard's files (src/runtime/server/dashboard/), embedded in the
// binary at build time by cmake/embed_files.cmake: the server reads nothing
// from disk to serve them. Thread safety: immutable.
#pragma once

#include <cstddef>
#include <span>

namespace perseus::server {

struct EmbeddedFile {
  const char* name;  // e.g. "index.html"
  const unsigned char* data;
  size_t size;
};

std::span<const EmbeddedFile> DashboardFiles();

}  // namespace perseus::server
