// The tools `cordon mcp` lists: their names, descriptions and JSON Schemas (tools/list). What
// each does is in mcp_tools.cpp.
#include "mcp_tools.hpp"

namespace cordon::cli::mcp {

namespace json = boost::json;

namespace {

json::object schema(json::object properties, json::array required = {}) {
  json::object s{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

json::object tool(const char* name, const char* title, const char* description, json::object input,
                  bool read_only) {
  return {{"name", name},
          {"title", title},
          {"description", description},
          {"inputSchema", std::move(input)},
          {"annotations", json::object{{"readOnlyHint", read_only},
                                       {"destructiveHint", !read_only},
                                       {"openWorldHint", false}}}};
}

json::object execute_output_schema() {
  json::object nullable_int{{"type", json::array{"integer", "null"}}};
  return schema(
      {{"exit_code", nullable_int},
       {"signal", nullable_int},
       {"timed_out", json::object{{"type", "boolean"}}},
       {"stdout", json::object{{"type", "string"}}},
       {"stderr", json::object{{"type", "string"}}},
       {"stdout_truncated", json::object{{"type", "boolean"}}},
       {"stderr_truncated", json::object{{"type", "boolean"}}},
       {"duration_ms", json::object{{"type", "integer"}}},
       {"backend", json::object{{"type", json::array{"string", "null"}}}},
       {"process_id",
        json::object{{"type", "string"}, {"description", "run_in_background: the command's id"}}},
       {"status", json::object{{"type", "string"}}}},
      {"exit_code"});
}

}  // namespace

json::array Tools::list() const {
  json::object argv_item{
      {"anyOf",
       json::array{json::object{{"type", "string"}},
                   schema({{"untrusted", json::object{{"type", "string"}}}}, {"untrusted"})}}};
  json::object exec_in = schema(
      {{"command", json::object{{"type", "string"},
                                {"description",
                                 "a command line, split into words without a "
                                 "shell (operators such as | > && are refused)"}}},
       {"argv", json::object{{"type", "array"},
                             {"items", argv_item},
                             {"description",
                              "the program and its arguments; an argument given "
                              "as {\"untrusted\": value} may not pose as an option"}}},
       {"timeout",
        json::object{{"type", "number"}, {"description", "seconds; at most the policy's timeout"}}},
       {"stdin", json::object{{"type", "string"}}},
       {"cwd",
        json::object{{"type", "string"}, {"description", "a directory relative to the workspace"}}},
       {"network", json::object{{"type", "boolean"},
                                {"description",
                                 "false: no network for this command, "
                                 "whatever the policy allows; true is "
                                 "refused when the policy denies it"}}},
       {"run_in_background", json::object{{"type", "boolean"},
                                          {"description",
                                           "start it and return at once with a process_id; "
                                           "then get_command_output, stop_command"}}}});
  auto exec = tool("execute_command", "Run a command in the sandbox",
                   "Runs one command in cordon's sandbox under the operator's policy, in the "
                   "workspace, and returns its exit code and output.",
                   std::move(exec_in), false);
  exec["outputSchema"] = execute_output_schema();
  json::object path{{"type", "string"}, {"description", "a path relative to the workspace"}};
  json::object id{{"type", "string"}, {"description", "what execute_command returned"}};
  return {
      std::move(exec),
      tool("read_file", "Read a file", "Reads a file of the workspace.",
           schema({{"path", path}}, {"path"}), true),
      tool("write_file", "Write a file",
           "Replaces (or creates) a file of the workspace atomically, making missing parent "
           "directories.",
           schema({{"path", path}, {"content", json::object{{"type", "string"}}}},
                  {"path", "content"}),
           false),
      tool("list_files", "List a directory", "Lists a directory of the workspace.",
           schema({{"path", path}}), true),
      tool("get_command_output", "Read a background command's output",
           "The last lines of a background command's output (tail), or everything from a byte "
           "offset on (since: the next_offset an earlier call gave), and its status.",
           schema({{"process_id", id},
                   {"tail", json::object{{"type", "integer"}, {"description", "lines"}}},
                   {"since", json::object{{"type", "integer"}, {"description", "a byte offset"}}}},
                  {"process_id"}),
           true),
      tool("stop_command", "Stop a background command",
           "SIGTERM to the whole command, then SIGKILL after grace seconds.",
           schema({{"process_id", id},
                   {"grace", json::object{{"type", "number"}, {"description", "seconds"}}}},
                  {"process_id"}),
           false),
      tool("list_commands", "List background commands",
           "The background commands this server started, and their status.", schema({}), true),
  };
}

}  // namespace cordon::cli::mcp
