// Finding a policy given on the command line by file or by preset name.
#pragma once

#include <cordon/error.hpp>
#include <cordon/policy.hpp>

#include <string>
#include <vector>

namespace cordon::cli {

/// Loads a policy given as a file path, or as the name of a shipped preset ("standard") when
/// no file of that name exists. Throws ErrorList.
Policy load_policy_arg(const std::string& arg);

}  // namespace cordon::cli
