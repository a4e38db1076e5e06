// Secret sources and their parsing; see secret_source.h.
#include "launcher/secret_source.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/unique_fd.h"
#include "monitor/supervisor.h"
#include "policies/parser.h"

namespace gander::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Reads what is available on `fd` into `into` (up to `cap`, the rest dropped); false at EOF or
// on an error other than EAGAIN.
bool Drain(int fd, std::string& into, size_t cap) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      size_t room = cap > into.size() ? cap - into.size() : 0;
      into.append(buf, std::min(room, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

int StatusOf(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return info.si_status;
  return 128 + info.si_status;
}

std::string TrimNewline(std::string text) {
  if (text.ends_with("\r\n")) {
    text.resize(text.size() - 2);
  } else if (text.ends_with('\n')) {
    text.pop_back();
  }
  return text;
}

Result<std::string> ReadSecretFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return ErrnoError("cannot open " + path);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("cannot stat " + path);
  if (!S_ISREG(st.st_mode)) return MakeError(path + " is not a regular file");
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read " + path);
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxSecretOutput) return MakeError(path + " is over 1 MiB");
  }
  return text;
}

Status CheckValue(const std::string& value) {
  if (value.empty()) return MakeError("the value is empty");
  if (value.find('\0') != std::string::npos) return MakeError("the value contains a NUL byte");
  return {};
}

// The last `max` bytes of `text`, on one line, for an error message.
std::string Tail(std::string text, size_t max = 400) {
  text = TrimNewline(std::move(text));
  if (text.size() > max) text = "..." + text.substr(text.size() - max);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

bool ParseInt(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<HostCommandResult> RunHostCommand(const std::string& script, std::string_view input,
                                         std::chrono::milliseconds timeout,
                                         const std::vector<std::string>& envp,
                                         bool stop_on_termination) {
  int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd err_r(err_pipe[0]), err_w(err_pipe[1]);
  if (!input.empty() && pipe2(in_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd in_r(in_pipe[0]), in_w(in_pipe[1]);

  // Everything the child touches is made before fork: it only calls async-signal-safe functions.
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  const ExecStrings env(envp);
  pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    setpgid(0, 0);  // its own group: the timeout kills everything it started
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(in_r ? in_r.get() : null_fd, 0);  // never gander's stdin: it carries MCP messages
    dup2(out_w.get(), 1);
    dup2(err_w.get(), 2);
    syscall(SYS_close_range, 3, ~0U, 0);
    ResetSignalsForExec();
    execve(argv[0], const_cast<char**>(argv), env.get());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with the kill below
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  for (int fd : {out_r.get(), err_r.get(), in_w.get()}) {
    if (fd >= 0) fcntl(fd, F_SETFL, O_NONBLOCK);
  }

  // Readable while such a signal is pending; never read here: it stays for the loop.
  UniqueFd term = stop_on_termination ? monitor::TerminationSignalFd() : UniqueFd();
  HostCommandResult result;
  size_t written = 0;
  bool exited = false;
  const auto deadline = Clock::now() + timeout;
  while (!exited || out_r || err_r) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = !exited;
      break;
    }
    pollfd fds[5] = {{out_r.get(), POLLIN, 0},
                     {err_r.get(), POLLIN, 0},
                     {in_w.get(), POLLOUT, 0},
                     {exited ? -1 : pidfd.get(), POLLIN, 0},
                     {term.get(), POLLIN, 0}};
    int ready = poll(fds, 5, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents && !Drain(out_r.get(), result.out, kMaxSecretOutput + 1)) out_r.Reset();
    if (fds[1].revents && !Drain(err_r.get(), result.err, kMaxCommandStderr)) err_r.Reset();
    if (fds[2].revents) {
      ssize_t n = (fds[2].revents & POLLOUT)
                      ? write(in_w.get(), input.data() + written, input.size() - written)
                      : -1;
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN) written = input.size();  // it closed its stdin: fine
      if (written == input.size()) in_w.Reset();
    }
    if (fds[3].revents) {
      siginfo_t info{};
      if (waitid(static_cast<idtype_t>(P_PIDFD), pidfd.get(), &info, WEXITED | WNOHANG) == 0 &&
          info.si_pid != 0) {
        exited = true;
        result.status = StatusOf(info);
      }
    }
    // After the exit and the output: a command that has ended keeps its value (a credential
    // just minted is then revoked as usual); one still running is stopped, and so is the wait
    // for a descendant that holds its stdout.
    if (fds[4].revents) {
      result.interrupted = !exited;
      break;
    }
  }
  // What it left behind (or all of it, at the timeout) goes with its group.
  kill(-pid, SIGKILL);
  if (!exited) {
    siginfo_t info{};
    if (waitid(static_cast<idtype_t>(P_PIDFD), pidfd.get(), &info, WEXITED) == 0) {
      result.status = StatusOf(info);
    }
  }
  return result;
}

Result<std::string> JsonField(std::string_view json_text, std::string_view dotted_path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() quotes the text near the error: only the offset is safe to show.
    return MakeError("the output is not JSON (parse error at byte " + std::to_string(e.byte) + ")");
  } catch (const std::exception&) {
    return MakeError("the output is not JSON");
  }
  const nlohmann::json* node = &doc;
  std::string_view rest = dotted_path;
  while (!rest.empty()) {
    size_t dot = rest.find('.');
    std::string key(rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    const nlohmann::json* next = nullptr;
    if (node->is_object()) {
      auto it = node->find(key);
      if (it != node->end()) next = &*it;
    } else if (node->is_array()) {
      int index = -1;
      if (ParseInt(key, index) && index >= 0 && static_cast<size_t>(index) < node->size()) {
        next = &(*node)[static_cast<size_t>(index)];
      }
    }
    if (next == nullptr) {
      return MakeError("the output has no JSON field " + std::string(dotted_path));
    }
    node = next;
  }
  if (node->is_string()) return node->get<std::string>();
  if (node->is_number() || node->is_boolean()) return node->dump();
  return MakeError("the JSON field " + std::string(dotted_path) + " is " +
                   (node->is_null()     ? "null"
                    : node->is_object() ? "an object"
                                        : "an array") +
                   ", not a string");
}

Result<int64_t> ParseExpiry(std::string_view text) {
  const std::string expected =
      "not a timestamp (expected RFC 3339 like 2026-11-30T12:00:00Z, or epoch seconds)";
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc()) return MakeError(expected);
    if (value > 100'000'000'000) value /= 1000;  // milliseconds
    return value;
  }
  // YYYY-MM-DD[T ]HH:MM:SS[.fraction](Z|+HH:MM|-HH:MM|+HHMM)
  if (text.size() < 19) return MakeError(expected);
  auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > text.size()) return false;
    for (size_t i = pos; i < pos + n; ++i) {
      if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) return false;
    }
    return ParseInt(text.substr(pos, n), out);
  };
  int year, month, day, hour, minute, second;
  bool shape = digits(0, 4, year) && text[4] == '-' && digits(5, 2, month) && text[7] == '-' &&
               digits(8, 2, day) && (text[10] == 'T' || text[10] == 't' || text[10] == ' ') &&
               digits(11, 2, hour) && text[13] == ':' && digits(14, 2, minute) && text[16] == ':' &&
               digits(17, 2, second);
  if (!shape || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    return MakeError(expected);
  }
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) != 0) ++pos;
  }
  std::string_view zone = text.substr(pos);
  int64_t offset = 0;
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else if (!zone.empty() && (zone[0] == '+' || zone[0] == '-')) {
    int zh = 0, zm = 0;
    bool ok = zone.size() == 6 ? digits(pos + 1, 2, zh) && zone[3] == ':' && digits(pos + 4, 2, zm)
              : zone.size() == 5 ? digits(pos + 1, 2, zh) && digits(pos + 3, 2, zm)
                                 : false;
    if (!ok || zh > 23 || zm > 59) return MakeError(expected);
    offset = (zh * 3600 + zm * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    return MakeError(zone.empty() ? "a timestamp without a time zone (expected Z or +HH:MM)"
                                  : expected);
  }
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::string Scrub(std::string text, const std::vector<std::string>& values) {
  for (const std::string& value : values) {
    if (value.size() < 4) continue;
    for (size_t pos = text.find(value); pos != std::string::npos;
         pos = text.find(value, pos + 10)) {
      text.replace(pos, value.size(), "[redacted]");
    }
  }
  return text;
}

std::vector<std::string> CommandEnvironment(const std::map<std::string, std::string>& env,
                                            const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> all = env;
  for (const auto& [name, value] : extra) all[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : all) out.push_back(name + "=" + value);
  return out;
}

Result<SecretValue> FetchSecret(const std::string& name, const policies::SecretRule& rule,
                                const std::map<std::string, std::string>& launcher_env,
                                const std::vector<std::string>& known_values,
                                bool stop_on_termination) {
  const std::string what = "secret " + name;
  SecretValue out;
  switch (rule.from) {
    case policies::SecretSource::kEnv: {
      const std::string& variable = rule.env_name.empty() ? name : rule.env_name;
      auto it = launcher_env.find(variable);
      if (it == launcher_env.end()) {
        return MakeError(what + ": " + variable + " is not set in gander's environment");
      }
      out.value = it->second;
      break;
    }
    case policies::SecretSource::kFile: {
      Result<std::string> text = ReadSecretFile(rule.path.path);
      if (!text) return std::move(text).error().Context(what);
      out.value = TrimNewline(std::move(*text));
      break;
    }
    case policies::SecretSource::kCommand: {
      auto timeout =
          std::chrono::milliseconds(rule.timeout_ms.value_or(policies::kDefaultSecretTimeoutMs));
      Result<HostCommandResult> run = RunHostCommand(
          rule.run, "", timeout, CommandEnvironment(launcher_env, {{"GANDER_SECRET", name}}),
          stop_on_termination);
      if (!run) return std::move(run).error().Context(what + ": cannot run its command");
      if (run->interrupted) {
        return MakeError(what + ": its command was stopped: gander was told to end " +
                         "(SIGTERM, SIGINT or SIGHUP) while it ran");
      }
      std::vector<std::string> scrub = known_values;
      scrub.push_back(TrimNewline(run->out));
      if (run->timed_out) {
        return MakeError(what + ": its command timed out after " +
                         policies::FormatDuration(static_cast<uint64_t>(timeout.count()) / 1000) +
                         " (its process group was killed)");
      }
      if (run->status != 0) {
        std::string err = Tail(Scrub(run->err, scrub));
        return MakeError(what + ": its command exited with status " + std::to_string(run->status) +
                         (err.empty() ? "" : ": " + err));
      }
      if (!run->err.empty()) {
        spdlog::debug("{}: its command wrote {} bytes on stderr (not shown: it may hold the value)",
                      what, run->err.size());
      }
      if (run->out.size() > kMaxSecretOutput) {
        return MakeError(what + ": its command wrote over 1 MiB on stdout");
      }
      if (rule.json.empty()) {
        out.value = TrimNewline(std::move(run->out));
      } else {
        Result<std::string> field = JsonField(run->out, rule.json);
        if (!field) return MakeError(what + ": " + field.error().message);
        out.value = std::move(*field);
      }
      if (!rule.expires.empty()) {
        Result<std::string> field = JsonField(run->out, rule.expires);
        if (!field) return MakeError(what + ": expires: " + field.error().message);
        // The field's text stays out of the message: a wrong path could point at the token.
        Result<int64_t> when = ParseExpiry(*field);
        if (!when) {
          return MakeError(what + ": the JSON field " + rule.expires + " is " +
                           when.error().message);
        }
        out.expires_at = *when;
      }
      break;
    }
  }
  if (Status ok = CheckValue(out.value); !ok) return std::move(ok).error().Context(what);
  return out;
}

}  // namespace gander::launcher
