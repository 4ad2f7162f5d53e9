// The capability vocabulary: the contract between a policy and the backends.
//
// A policy becomes requirements, each one of these ids (cordon/requirements.hpp). A backend
// proves an id in its probe only when it has checked, on this host, that it keeps the promise
// written next to the id; cordon runs a command only on a backend that proved every requirement.
// These comments are the meaning of each id; the README and the plugins' READMEs refer to them.
#pragma once

#include <cordon/sdk/export.hpp>

#include <string_view>
#include <vector>

namespace cordon::cap {

/// Of the host's files the command reads only what is granted: `filesystem.read`, the workspace,
/// the write paths, the host HOME under `filesystem.home = "host"`, and what the backend's
/// settings mount.
inline constexpr std::string_view fs_read_confine = "fs.read.confine";
/// Each `filesystem.blocked` path, and cordon's own state (Plan::protected_paths), cannot be
/// read, listed or executed by the command, even with `read = "host"`, under any of its names:
/// other mounts of it, and the other names (hard links) of a blocked file or of the files in a
/// blocked directory (`other_names_to_mask()`, cordon/sdk/path_guard.hpp: among a directory's
/// first kOtherNamesWalk entries), are masked too, or the run is refused.
inline constexpr std::string_view fs_read_block = "fs.read.block";
/// The command writes only to `filesystem.write` (the workspace only when a write path covers
/// it) and to its own HOME and /tmp.
inline constexpr std::string_view fs_write_confine = "fs.write.confine";
/// No program of `process.blocked_commands` can be executed, under any name or link, nor
/// through a multi-call program (busybox) that provides it.
inline constexpr std::string_view fs_exec_block = "fs.exec.block";
/// Only the programs of `process.allowed_commands` (and their interpreters) can be executed.
inline constexpr std::string_view fs_exec_confine = "fs.exec.confine";
/// The command reaches no network: at most a loopback of its own.
inline constexpr std::string_view net_deny = "net.deny";
/// The command may connect and bind over TCP only on `network.connect_ports` and
/// `network.bind_ports`; every other inet protocol is refused.
inline constexpr std::string_view net_ports = "net.ports";
/// The sandbox's processes together use at most `limits.memory_mb` (a per-process RLIMIT_AS
/// does not prove it).
inline constexpr std::string_view limit_memory = "limit.memory";
/// The sandbox holds at most `limits.max_processes` processes and threads at once, counted for
/// the sandbox alone, not for the user.
inline constexpr std::string_view limit_processes = "limit.processes";
/// Each process of the command has at most `limits.max_open_files` open descriptors.
inline constexpr std::string_view limit_files = "limit.files";
/// Each process of the command is killed after `limits.cpu_seconds` of CPU time.
inline constexpr std::string_view limit_cpu = "limit.cpu";
/// No file the command writes grows past `limits.max_file_size_mb`.
inline constexpr std::string_view limit_file_size = "limit.file_size";
/// The sandbox's processes together use at most `limits.cpu_percent` % of one CPU.
inline constexpr std::string_view limit_cpu_share = "limit.cpu_share";
/// At `limits.timeout` every process of the command is dead: those that called setsid(),
/// double-forked or ignore SIGTERM included.
inline constexpr std::string_view limit_timeout = "limit.timeout";
/// The command cannot see, signal or trace any process outside the sandbox, nor read their
/// /proc entries.
inline constexpr std::string_view proc_isolate = "proc.isolate";
/// The command cannot start another process once it runs (threads still work).
inline constexpr std::string_view proc_no_subprocess = "proc.no_subprocess";
/// The command reaches none of the host's SysV IPC, POSIX message queues or abstract unix
/// sockets.
inline constexpr std::string_view ipc_isolate = "ipc.isolate";
/// The command's environment is exactly Plan::env plus HOME: nothing is inherited.
inline constexpr std::string_view env_grant = "env.grant";
/// HOME is a fresh, empty 0700 directory of the run, not the caller's home.
inline constexpr std::string_view home_private = "home.private";
/// The command holds no host privilege, even when cordon runs as root: not uid 0 on the host,
/// no capabilities, and no way to gain them (no_new_privs).
inline constexpr std::string_view identity_unprivileged = "identity.unprivileged";

/// Every id above, in the order they are declared.
CORDON_API const std::vector<std::string_view>& all();

}  // namespace cordon::cap
