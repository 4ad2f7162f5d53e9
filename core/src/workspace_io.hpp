// What the workspace file API's sources share (internal).
#pragma once

#include <cordon/sdk/error.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace cordon::detail {

/// The error for a failed system call on the workspace `path`: CRD4004 when the kernel refused
/// to leave the workspace (EXDEV, ELOOP), else CRD4009 "`what` 'path': strerror".
Error workspace_error(std::string_view path, const char* what, int err);

/// The directory part of the workspace `path` ("." for a bare name, "" for "/x"); `leaf` gets
/// the last component. Throws CRD4004 when that is not a plain name ("", "." or "..").
std::string split_parent(std::string_view path, std::string& leaf);

/// The path the descriptor `fd` names now (from /proc/self/fd); empty when unknown.
std::filesystem::path fd_path(int fd);

}  // namespace cordon::detail
