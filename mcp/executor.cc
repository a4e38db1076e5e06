#include "mcp/executor.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/exec_signals.h"
#include "common/unique_fd.h"
#include "mcp/base64.h"
#include "mcp/bounded_output.h"
#include "mcp/workspace_path.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxRequest = 32u << 20;     // a file_write of a large file, base64'd
constexpr size_t kDefaultOutput = 16u << 10;  // per stream
constexpr size_t kMaxOutput = 1u << 20;
constexpr size_t kDefaultRead = 256u << 10;
constexpr size_t kMaxListEntries = 2000;

// The persistent interpreter: control requests on fd 3, replies on fd 4, the user code's
// stdout/stderr on the interpreter's fds 1 and 2 (pipes the executor drains per call).
constexpr const char* kPythonDriver = R"PY(
import ast, json, os, sys, traceback
ctl_in = os.fdopen(3, "r", encoding="utf-8")
ctl_out = os.fdopen(4, "w", encoding="utf-8")
ns = {"__name__": "__main__", "__builtins__": __builtins__}
for line in ctl_in:
    reply = {"ok": True}
    try:
        code = json.loads(line)["code"]
        tree = ast.parse(code, "<python_run>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<python_run>", "exec"), ns)
        if last is not None:
            value = eval(compile(last, "<python_run>", "eval"), ns)
            if value is not None:
                reply["value"] = repr(value)[:65536]
    except SystemExit as e:
        reply = {"ok": False, "error": "SystemExit(%r): the interpreter keeps running" % (e.code,)}
    except BaseException:
        reply = {"ok": False, "error": traceback.format_exc()[-16384:]}
    sys.stdout.flush()
    sys.stderr.flush()
    ctl_out.write(json.dumps(reply) + "\n")
    ctl_out.flush()
)PY";

size_t OutputLimit(const json& args) {
  size_t limit = kDefaultOutput;
  if (auto it = args.find("max_output_bytes"); it != args.end() && it->is_number_unsigned()) {
    limit = it->get<size_t>();
  }
  return std::clamp<size_t>(limit, 256, kMaxOutput);
}

int TimeoutMs(const json& args, int fallback) {
  if (auto it = args.find("timeout"); it != args.end() && it->is_number()) {
    double s = it->get<double>();
    if (s > 0) return static_cast<int>(std::min(s, 3600.0) * 1000);
  }
  return fallback;
}

json Streams(const BoundedOutput& out, const BoundedOutput& err) {
  return {{"stdout", out.Text()},        {"stderr", err.Text()},    {"stdout_bytes", out.total()},
          {"stderr_bytes", err.total()}, {"stdout_cut", out.cut()}, {"stderr_cut", err.cut()}};
}

// Reads whatever `fd` has now (non-blocking) into `out`; false at EOF or error.
bool DrainOnce(int fd, BoundedOutput& out) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n > 0) {
    out.Feed({buf, static_cast<size_t>(n)});
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

void DrainAll(int fd, BoundedOutput& out) {
  if (fd < 0) return;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.Feed({buf, static_cast<size_t>(n)});
}

struct Pipe {
  UniqueFd read, write;
  static std::optional<Pipe> Make() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
    fcntl(p.read.get(), F_SETFL, O_NONBLOCK);
    return p;
  }
};

// Between fork and exec: only async-signal-safe calls.
void ChildStdio(int out, int err) {
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  dup2(out, 1);
  dup2(err, 2);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  ResetSignalsForExec();
}

// The executor's stdin: requests the main loop reads one at a time, and that a running command
// watches for its own cancellation (notifications/cancelled naming its id).
struct Input {
  std::string buffer;
  bool eof = false;

  void ReadSome() {
    char buf[65536];
    ssize_t n = read(0, buf, sizeof(buf));
    if (n > 0) buffer.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
  }

  // Takes a complete notifications/cancelled line for `id` out of the buffer.
  bool TakeCancel(const json& id) {
    for (size_t at = 0, nl; (nl = buffer.find('\n', at)) != std::string::npos; at = nl + 1) {
      std::string_view line(buffer.data() + at, nl - at);
      if (line.find("notifications/cancelled") == std::string_view::npos) continue;
      json msg = json::parse(line, nullptr, false);
      if (!msg.is_object() || msg.value("method", "") != "notifications/cancelled") continue;
      json params = msg.value("params", json::object());
      if (!params.is_object() || params.value("requestId", json()) != id) continue;
      buffer.erase(at, nl + 1 - at);
      return true;
    }
    return false;
  }
};

json CommandRun(const json& args, Input& input, const json& id) {
  if (!args.contains("cmd") || !args["cmd"].is_string()) {
    return {{"error", "`cmd` (a string) is required"}};
  }
  std::string cmd = args["cmd"].get<std::string>();
  int timeout_ms = TimeoutMs(args, 120000);
  auto out_pipe = Pipe::Make(), err_pipe = Pipe::Make();
  if (!out_pipe || !err_pipe) return {{"error", std::string("pipe: ") + strerror(errno)}};
  auto started = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return {{"error", std::string("fork: ") + strerror(errno)}};
  if (pid == 0) {
    ChildStdio(out_pipe->write.get(), err_pipe->write.get());
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, whichever runs first
  out_pipe->write.Reset();
  err_pipe->write.Reset();
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  BoundedOutput out(OutputLimit(args)), err(OutputLimit(args));
  int out_fd = out_pipe->read.get(), err_fd = err_pipe->read.get();
  bool timed_out = false, exited = false, cancelled = false;
  auto deadline = started + std::chrono::milliseconds(timeout_ms);
  while (!exited && (out_fd >= 0 || err_fd >= 0 || pidfd)) {
    pollfd fds[4] = {{out_fd, POLLIN, 0},
                     {err_fd, POLLIN, 0},
                     {pidfd.get(), POLLIN, 0},
                     {input.eof ? -1 : 0, POLLIN, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 4, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents && !DrainOnce(out_fd, out)) out_fd = -1;
    if (fds[1].revents && !DrainOnce(err_fd, err)) err_fd = -1;
    if (fds[2].revents) exited = true;
    if (fds[3].revents) input.ReadSome();  // what follows stays for the main loop
    if (fds[3].revents && input.TakeCancel(id)) {
      cancelled = true;
      break;
    }
  }
  // The command's process group ends with it: nothing it left behind keeps writing.
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  DrainAll(out_fd, out);
  DrainAll(err_fd, err);
  json result = Streams(out, err);
  result["timed_out"] = timed_out;
  if (cancelled) result["cancelled"] = true;
  result["duration_ms"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  if (timed_out || cancelled) {
    result["exit_code"] = nullptr;
    result["signal"] = SIGKILL;
  } else if (WIFSIGNALED(status)) {
    result["exit_code"] = nullptr;
    result["signal"] = WTERMSIG(status);
  } else {
    result["exit_code"] = WEXITSTATUS(status);
  }
  return result;
}

class Python {
 public:
  ~Python() { Stop(); }

  json Run(const json& args) {
    if (!args.contains("code") || !args["code"].is_string()) {
      return {{"error", "`code` (a string) is required"}};
    }
    bool fresh = pid_ <= 0;
    if (fresh) {
      if (auto e = Start(); !e.empty()) return {{"error", e}};
    }
    std::string line =
        json{{"code", args["code"]}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (!WriteAll(ctl_out_.get(), line)) {
      BoundedOutput last(4096);
      DrainAll(err_.get(), last);
      Stop();
      return {{"error",
               "the interpreter is gone (state lost); run again to start a fresh one. Its "
               "last words: " +
                   last.Text()}};
    }
    BoundedOutput out(OutputLimit(args)), err(OutputLimit(args));
    std::string reply;
    auto started = Clock::now();
    auto deadline = started + std::chrono::milliseconds(TimeoutMs(args, 120000));
    bool timed_out = false, gone = false;
    while (reply.find('\n') == std::string::npos) {
      pollfd fds[3] = {
          {out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}, {ctl_in_.get(), POLLIN, 0}};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
      if (fds[0].revents) DrainOnce(out_.get(), out);
      if (fds[1].revents) DrainOnce(err_.get(), err);
      if (fds[2].revents) {
        char buf[65536];
        ssize_t n = read(ctl_in_.get(), buf, sizeof(buf));
        if (n <= 0 && !(n < 0 && errno == EAGAIN)) {
          gone = true;
          break;
        }
        if (n > 0 && reply.size() < (1u << 20)) reply.append(buf, static_cast<size_t>(n));
      }
    }
    DrainAll(out_.get(), out);
    DrainAll(err_.get(), err);
    json result = Streams(out, err);
    result["duration_ms"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    result["fresh_interpreter"] = fresh;
    result["timed_out"] = timed_out;
    if (timed_out || gone) {
      Stop();
      result["ok"] = false;
      result["error"] = timed_out ? "timed out: the interpreter was killed and its state is lost"
                                  : "the interpreter exited: its state is lost";
      return result;
    }
    json parsed = json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
    if (!parsed.is_object()) parsed = {{"ok", false}, {"error", "unreadable interpreter reply"}};
    for (auto& [k, v] : parsed.items()) result[k] = v;
    return result;
  }

 private:
  static bool WriteAll(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  std::string Start() {
    auto out = Pipe::Make(), err = Pipe::Make(), req = Pipe::Make(), rep = Pipe::Make();
    if (!out || !err || !req || !rep) return std::string("pipe: ") + strerror(errno);
    fcntl(req->read.get(), F_SETFL, 0);  // the interpreter's end blocks: it waits for requests
    pid_t pid = fork();
    if (pid < 0) return std::string("fork: ") + strerror(errno);
    if (pid == 0) {
      ChildStdio(out->write.get(), err->write.get());
      // fds 3 and 4 for the control channel; dup2 clears O_CLOEXEC on the copies.
      int in = fcntl(req->read.get(), F_DUPFD_CLOEXEC, 10);
      int outc = fcntl(rep->write.get(), F_DUPFD_CLOEXEC, 10);
      dup2(in, 3);
      dup2(outc, 4);
      execl("/usr/bin/python3", "python3", "-u", "-c", kPythonDriver, static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);
    pid_ = pid;
    out_ = std::move(out->read);
    err_ = std::move(err->read);
    ctl_out_ = std::move(req->write);
    ctl_in_ = std::move(rep->read);
    return "";
  }

  void Stop() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    out_.Reset();
    err_.Reset();
    ctl_in_.Reset();
    ctl_out_.Reset();
  }

  pid_t pid_ = -1;
  UniqueFd out_, err_, ctl_in_, ctl_out_;
};

Result<std::string> PathArg(const json& args, const char* fallback = nullptr) {
  auto it = args.find("path");
  if (it == args.end() || !it->is_string()) {
    if (fallback) return std::string(fallback);
    return MakeError("`path` (a string) is required");
  }
  return CheckWorkspacePath(it->get<std::string>());
}

std::string Describe(const Error& e) { return e.Describe(); }

// mkdir -p of `relative`'s parent beneath the workspace, refusing symlinks on the way.
Status MakeParentsBeneath(int ws, const std::string& relative) {
  UniqueFd dir(fcntl(ws, F_DUPFD_CLOEXEC, 0));
  size_t start = 0;
  for (size_t slash; (slash = relative.find('/', start)) != std::string::npos; start = slash + 1) {
    std::string part = relative.substr(start, slash - start);
    if (mkdirat(dir.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("mkdir " + relative.substr(0, slash));
    }
    int next = openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return ErrnoError("open " + relative.substr(0, slash));
    dir.Reset(next);
  }
  return {};
}

json FileWrite(int ws, const json& args) {
  auto path = PathArg(args);
  if (!path) return {{"error", Describe(path.error())}};
  if (!args.contains("content") || !args["content"].is_string()) {
    return {{"error", "`content` (a string) is required"}};
  }
  std::string encoding = args.value("encoding", std::string("text"));
  if (encoding != "text" && encoding != "base64") {
    return {{"error", "`encoding`: \"text\" or \"base64\""}};
  }
  std::optional<std::string> decoded;
  if (encoding == "base64") {
    decoded = Base64Decode(args["content"].get_ref<const std::string&>());
    if (!decoded) return {{"error", "`content` is not base64 (encoding \"base64\")"}};
  }
  const std::string& content = decoded ? *decoded : args["content"].get_ref<const std::string&>();
  if (Status made = MakeParentsBeneath(ws, *path); !made)
    return {{"error", Describe(made.error())}};
  bool append = args.value("append", false);
  // O_NONBLOCK: a FIFO planted by code in the sandbox must not block this (single-threaded)
  // server until a reader comes; only a regular file is written.
  auto fd =
      OpenBeneath(ws, *path, O_WRONLY | O_CREAT | O_NONBLOCK | (append ? O_APPEND : O_TRUNC), 0644);
  if (!fd) return {{"error", Describe(fd.error())}};
  UniqueFd file(*fd);
  struct stat st;
  if (fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return {{"error", *path + " is not a regular file"}};
  }
  fcntl(file.get(), F_SETFL, fcntl(file.get(), F_GETFL) & ~O_NONBLOCK);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(file.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {{"error", "write " + *path + ": " + strerror(errno)}};
    done += static_cast<size_t>(n);
  }
  return {{"path", *path}, {"bytes_written", done}};
}

json FileRead(int ws, const json& args) {
  auto path = PathArg(args);
  if (!path) return {{"error", Describe(path.error())}};
  size_t limit = kDefaultRead;
  if (auto it = args.find("max_bytes"); it != args.end() && it->is_number_unsigned()) {
    limit = std::clamp<size_t>(it->get<size_t>(), 1, 4u << 20);
  }
  auto fd = OpenBeneath(ws, *path, O_RDONLY | O_NONBLOCK);
  if (!fd) return {{"error", Describe(fd.error())}};
  UniqueFd file(*fd);
  struct stat st;
  if (fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return {{"error", *path + " is not a regular file"}};
  }
  std::string content(limit, '\0');
  size_t got = 0;
  while (got < limit) {
    ssize_t n = read(file.get(), content.data() + got, limit - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  content.resize(got);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  // Bytes a JSON string cannot carry (a binary, an image) come base64'd, and say so; the
  // caller may ask for base64 in any case.
  std::string encoding = args.value("encoding", std::string(""));
  if (encoding != "" && encoding != "text" && encoding != "base64") {
    return {{"error", "`encoding`: \"text\" or \"base64\""}};
  }
  bool binary = encoding == "base64" || !IsUtf8(content);
  return {{"path", *path},
          {"content", binary ? Base64Encode(content) : content},
          {"encoding", binary ? "base64" : "text"},
          {"size", size},
          {"cut", size > got ? size - got : 0}};
}

json FileList(int ws, const json& args) {
  auto path = PathArg(args, ".");
  if (!path) return {{"error", Describe(path.error())}};
  Result<int> fd = *path == "." ? Result<int>(fcntl(ws, F_DUPFD_CLOEXEC, 0))
                                : OpenBeneath(ws, *path, O_RDONLY | O_DIRECTORY);
  if (!fd) return {{"error", Describe(fd.error())}};
  int dir_fd = openat(*fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  close(*fd);
  DIR* dir = dir_fd >= 0 ? fdopendir(dir_fd) : nullptr;
  if (!dir) return {{"error", "open " + *path + ": " + strerror(errno)}};
  json entries = json::array();
  size_t total = 0;
  std::vector<json> sorted;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (++total > kMaxListEntries) continue;
    struct stat st {};
    fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW);
    const char* type = S_ISDIR(st.st_mode)   ? "dir"
                       : S_ISREG(st.st_mode) ? "file"
                       : S_ISLNK(st.st_mode) ? "symlink"
                                             : "other";
    sorted.push_back({{"name", name}, {"type", type}, {"size", static_cast<uint64_t>(st.st_size)}});
  }
  closedir(dir);
  std::sort(sorted.begin(), sorted.end(),
            [](const json& a, const json& b) { return a["name"] < b["name"]; });
  for (auto& e : sorted) entries.push_back(std::move(e));
  return {{"path", *path}, {"entries", entries}, {"total", total}};
}

// What isolation is in force, as this process sees it.
json Hello() {
  json facts;
  // From the kernel directly where it can say: /proc may be out of Landlock's read rules.
  facts["seccomp"] = prctl(PR_GET_SECCOMP) == 2;
  facts["no_new_privs"] = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
  std::ifstream uid_map("/proc/self/uid_map");
  std::string first;
  bool mapped = static_cast<bool>(std::getline(uid_map, first));
  std::istringstream fields(first);
  uint64_t inside = 0, outside = 0, count = 0;
  fields >> inside >> outside >> count;
  facts["user_namespace"] = mapped && count != 0 && count != 4294967295ull;
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  facts["landlock_abi"] = abi > 0 ? abi : 0;
  char cwd[4096];
  facts["workspace"] = getcwd(cwd, sizeof(cwd)) ? cwd : "";
  facts["pid"] = getpid();
  return facts;
}

std::string ReadLine(Input& input) {
  for (;;) {
    if (size_t nl = input.buffer.find('\n'); nl != std::string::npos) {
      std::string line = input.buffer.substr(0, nl);
      input.buffer.erase(0, nl + 1);
      return line;
    }
    if (input.buffer.size() > kMaxRequest) {
      input.buffer.clear();
      return "";
    }
    if (input.eof) return "";
    input.ReadSome();
  }
}

// A tool the server ran on the host (sandbox_create, _fork, _export, _kill, _renew), sent
// here only so that gander run's relay records it as a tool call of this sandbox's extension
// (metrics and audit log): nothing is done; a failure the server had is answered as one.
json HostSideRecord(const std::string& name, const json& args) {
  if (args.value("failed", false)) return {{"error", name + " failed on the host"}};
  return {{"recorded", name}};
}

}  // namespace

int ExecutorMain() {
  // Not dumpable: what the model runs here (same uid) cannot open /proc/<executor>/fd/1 and
  // write answers of its own to the server.
  prctl(PR_SET_DUMPABLE, 0);
  signal(SIGPIPE, SIG_IGN);
  UniqueFd ws(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  Python python;
  Input input;
  while (!input.eof || input.buffer.find('\n') != std::string::npos) {
    std::string line = ReadLine(input);
    if (line.empty()) continue;
    json request = json::parse(line, nullptr, false);
    if (!request.is_object()) continue;
    json reply = {{"jsonrpc", "2.0"}, {"id", request.value("id", json())}};
    std::string method = request.value("method", "");
    json params = request.value("params", json::object());
    if (method.starts_with("notifications/")) continue;  // a cancel after its command ended
    if (method == "initialize") {
      // The relay sees a handshake, so the calls that follow are tool calls of a session.
      reply["result"] = {{"protocolVersion", "2025-06-18"},
                         {"capabilities", {{"tools", json::object()}}},
                         {"serverInfo", {{"name", "gander-mcp-executor"}, {"version", "0.1.0"}}},
                         {"_meta", {{"gander/isolation", Hello()}}}};
    } else if (method == "gander/hello") {
      reply["result"] = Hello();
    } else if (method == "tools/call" && params.is_object()) {
      std::string name = params.value("name", "");
      json args = params.value("arguments", json::object());
      if (!args.is_object()) args = json::object();
      json result = name == "command_run"          ? CommandRun(args, input, reply["id"])
                    : name == "python_run"         ? python.Run(args)
                    : name == "file_write"         ? FileWrite(ws.get(), args)
                    : name == "file_read"          ? FileRead(ws.get(), args)
                    : name == "file_list"          ? FileList(ws.get(), args)
                    : name.starts_with("sandbox_") ? HostSideRecord(name, args)
                                                   : json{{"error", "unknown tool " + name}};
      bool failed = result.contains("error") || (result.contains("ok") && result["ok"] == false) ||
                    (result.contains("exit_code") && result["exit_code"] != 0);
      // The relay counts a result with isError as a failed tool call.
      reply["result"] = {
          {"structuredContent", result}, {"isError", failed}, {"content", json::array()}};
    } else {
      reply["error"] = {{"code", -32601}, {"message", "unknown method " + method}};
    }
    std::string out = reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = write(1, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 1;
      done += static_cast<size_t>(n);
    }
  }
  return 0;
}

}  // namespace gander::mcp
