// The collector daemon (see collector.h).
#include "exporters/collector/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <prometheus/exposer.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "exporters/audit_log.h"
#include "exporters/collector/collector_state.h"
#include "exporters/collector/event_metrics.h"
#include "exporters/collector/metric_store.h"
#include "exporters/collector/wire_parse.h"
#include "exporters/collector_paths.h"
#include "exporters/collector_token.h"

namespace gander::exporters::collector {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kMaxReadPerTurn = 1024 * 1024;   // per connection, for fairness
constexpr size_t kMaxPendingReplies = 64 * 1024;  // a launcher that never reads its acks

int64_t NowUnix() { return static_cast<int64_t>(time(nullptr)); }

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

struct Connection {
  UniqueFd fd;
  std::string in;
  std::string out;
  bool greeted = false;
  wire::Hello hello;
  AuditLog* audit = nullptr;
  bool running = false;
  uint64_t applied = 0;  // highest seq applied or skipped as a duplicate, this connection
  uint64_t acked = 0;
  bool closing = false;
};

}  // namespace

class Collector::Impl {
 public:
  explicit Impl(CollectorOptions options) : options_(std::move(options)) {}

  Status Init();
  Status Run();
  void RequestStop() {
    uint64_t one = 1;
    (void)!write(stop_fd_.get(), &one, sizeof(one));
  }

 private:
  void Accept();
  void ReadFrom(Connection& c);
  void HandleLine(Connection& c, std::string_view line);
  void HandleHello(Connection& c, std::string_view line);
  void Drop(Connection& c, const std::string& reason);
  void Refuse(std::string_view reason, const std::string& detail);
  void Close(Connection& c);
  void WriteReplies(Connection& c);
  void Persist();
  void MarkDirty() {
    if (!std::exchange(dirty_, true)) persist_due_ = Clock::now() + options_.persist_interval;
  }
  bool TryServeMetrics();
  bool Orphaned() const;
  void UpdateRunning(const std::string& extension);
  AuditLog* AuditLogFor(const wire::Hello& hello);

  CollectorOptions options_;
  std::shared_ptr<MetricStore> store_;  // shared with the exposer
  std::unique_ptr<EventMetrics> metrics_;
  LauncherLedger ledger_;
  std::unordered_set<std::string> extensions_;  // seen, for LabelLimits::extensions
  LineParser parser_;
  UniqueFd lock_fd_, state_lock_fd_, listen_fd_, signal_fd_, stop_fd_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::map<int, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, std::unique_ptr<AuditLog>> audit_logs_;  // by path
  std::unordered_map<std::string, uint64_t> audit_lost_;                   // seen so far
  std::unordered_map<std::string, std::string> audit_owner_;               // path -> extension
  bool persist_now_ = false;        // a launcher asked for its acknowledgement (sync)
  bool applied_this_turn_ = false;  // a record was applied: the turn ends with the coalesce nap
  bool behind_ = false;             // a connection had more than a turn's read: no nap
  size_t unpersisted_ = 0;          // records applied since
  Clock::time_point next_orphan_check_{};
  uint64_t next_generation_ = 1;  // the state's next save (collector_state.h)
  bool dirty_ = false;
  // When the state must be written at the latest: persist_interval after the first change
  // not yet written (not after the last write: a launcher that starts after an idle spell
  // should not pay for a write at its hello and again at its exit).
  Clock::time_point persist_due_;
  std::string last_persist_error_;
  std::string token_;  // what every hello must present
  bool stop_ = false;
};

Status Collector::Impl::Init() {
  if (options_.socket_path.empty()) options_.socket_path = DefaultCollectorSocket();
  if (options_.state_path.empty()) options_.state_path = DefaultCollectorStatePath();
  const std::string dir = DirOf(options_.socket_path);
  if (auto s = EnsurePrivateDir(dir); !s) return std::move(s).error().Context("socket directory");
  if (auto s = EnsurePrivateDir(DirOf(options_.state_path)); !s) {
    return std::move(s).error().Context("state directory");
  }
  if (options_.token_path.empty()) options_.token_path = DefaultCollectorTokenPath();
  if (auto s = EnsurePrivateDir(DirOf(options_.token_path)); !s) {
    return std::move(s).error().Context("token directory");
  }

  // The lock first: whoever holds it owns the socket path, so unlinking a stale socket
  // below cannot pull it from under a live collector.
  const std::string lock = CollectorLockPath(options_.socket_path);
  lock_fd_.Reset(open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_fd_) return ErrnoError("open " + lock);
  if (flock(lock_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    return Error{EWOULDBLOCK, "another collector holds " + lock};
  }
  // And the state file's: two collectors on different sockets (a launcher without
  // XDG_RUNTIME_DIR next to the systemd unit's collector) must not overwrite one state.
  const std::string state_lock = options_.state_path + ".lock";
  state_lock_fd_.Reset(open(state_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!state_lock_fd_) return ErrnoError("open " + state_lock);
  if (flock(state_lock_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    return Error{EWOULDBLOCK, "another collector holds " + state_lock};
  }
  // Before the socket exists: a launcher that can connect can also read the token.
  auto token = LoadOrCreateCollectorToken(options_.token_path);
  if (!token) return std::move(token).error().Context("collector token");
  token_ = std::move(token).value();

  store_ = std::make_shared<MetricStore>();
  LabelBounds bounds(options_.limits);
  if (auto s = LoadState(options_.state_path, *store_, bounds, ledger_); s) {
    next_generation_ = *s + 1;
  } else {
    // Keep the damaged files for a human, start from zero (a counter reset is what Prometheus
    // handles anyway), and say so loudly.
    std::string aside = options_.state_path + ".damaged";
    for (uint64_t g : {0, 1}) {
      std::string slot = StateSlot(options_.state_path, g);
      if (rename(slot.c_str(), StateSlot(aside, g).c_str()) != 0 && errno != ENOENT) {
        spdlog::error("collector: cannot move {} aside: {}", slot, strerror(errno));
      }
    }
    spdlog::error("collector: state unreadable ({}); set aside as {}, starting from zero",
                  s.error().Describe(), aside);
    store_ = std::make_shared<MetricStore>();
    bounds = LabelBounds(options_.limits);
    ledger_ = LauncherLedger();
  }
  metrics_ = std::make_unique<EventMetrics>(*store_, std::move(bounds));
  for (auto reason : kRefusalReasons) metrics_->CountRefused(reason, 0);
  ledger_.Prune(NowUnix(), options_.forget_launchers_after_s);
  for (const auto& [id, entry] : ledger_.entries()) extensions_.insert(entry.extension);

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options_.socket_path.size() >= sizeof(addr.sun_path)) {
    return Error{ENAMETOOLONG, "socket path " + options_.socket_path};
  }
  options_.socket_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  listen_fd_.Reset(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_fd_) return ErrnoError("socket");
  unlink(options_.socket_path.c_str());  // stale: its collector is gone (we hold the lock)
  mode_t old = umask(077);
  int bound = bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old);
  if (bound != 0) return ErrnoError("bind " + options_.socket_path);
  if (listen(listen_fd_.get(), 128) != 0) return ErrnoError("listen");

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  signal_fd_.Reset(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signal_fd_) return ErrnoError("signalfd");
  stop_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!stop_fd_) return ErrnoError("eventfd");

  // A busy port (another user's collector, or our predecessor still closing) must not cost
  // the launchers their audit logs and counts: run on, and try the port again every second.
  if (!options_.listen.empty() && !TryServeMetrics()) {
    spdlog::error(
        "collector: cannot serve /metrics on {} (port busy?); counting on and "
        "retrying every second",
        options_.listen);
  }
  spdlog::info("collector: socket {}, state {}, metrics {}", options_.socket_path,
               options_.state_path, options_.listen.empty() ? "off" : options_.listen);
  return {};
}

Status Collector::Impl::Run() {
  std::vector<pollfd> fds;
  std::vector<Connection*> polled;
  while (!stop_) {
    fds.clear();
    polled.clear();
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    fds.push_back({signal_fd_.get(), POLLIN, 0});
    fds.push_back({stop_fd_.get(), POLLIN, 0});
    for (auto& [fd, c] : connections_) {
      fds.push_back({fd, static_cast<short>(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
      polled.push_back(c.get());
    }
    int timeout = -1;
    // Checked once an interval, not at every turn (two stats a turn were 5 % of the
    // collector's time per short launcher); the poll wakes for the next check.
    if (options_.exit_when_orphaned) {
      if (Clock::now() >= next_orphan_check_) {
        next_orphan_check_ = Clock::now() + options_.orphan_check_interval;
        if (Orphaned()) {
          spdlog::info("collector: {} or {} is gone; exiting", DirOf(options_.socket_path),
                       DirOf(options_.state_path));
          return {};  // nothing to persist to, nobody to serve
        }
      }
      timeout = static_cast<int>(
          std::chrono::ceil<std::chrono::milliseconds>(next_orphan_check_ - Clock::now()).count());
      timeout = std::max(timeout, 0);
    }
    if (!options_.listen.empty() && !exposer_) {
      if (TryServeMetrics()) {
        spdlog::info("collector: serving /metrics on {}", options_.listen);
      } else {
        timeout = timeout < 0 ? 1000 : std::min(timeout, 1000);
      }
    }
    if (dirty_) {
      auto due = persist_due_ - Clock::now();
      int persist_in = static_cast<int>(
          std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(due).count()));
      timeout = timeout < 0 ? persist_in : std::min(timeout, persist_in);
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return ErrnoError("poll");
    if (fds[1].revents || fds[2].revents) stop_ = true;
    if (fds[0].revents & POLLIN) Accept();
    for (size_t i = 0; i < polled.size(); ++i) {
      Connection& c = *polled[i];
      short re = fds[3 + i].revents;
      if (re & (POLLIN | POLLHUP | POLLERR)) ReadFrom(c);
      if (!c.closing && (re & POLLOUT)) WriteReplies(c);
    }
    std::erase_if(connections_, [](const auto& e) { return e.second->closing; });
    if (dirty_ && (persist_now_ || unpersisted_ >= options_.persist_after_records ||
                   Clock::now() >= persist_due_)) {
      Persist();
    }
    persist_now_ = false;
    const bool behind = std::exchange(behind_, false);
    if (std::exchange(applied_this_turn_, false) && !behind && options_.coalesce.count() > 0 &&
        !stop_) {
      // The coalesce nap (CollectorOptions::coalesce). A stop request ends it, and so does a
      // connection: a launcher that starts (it waits for our welcome), one that is exiting
      // and rings after its sync (CollectorClient::Finish), so that neither waits for the nap,
      // and one whose socket buffer is full (it rings at EAGAIN): what it could not send is
      // only in its memory, and a SIGKILL would lose it while its own audit log has it.
      pollfd nap[] = {{signal_fd_.get(), POLLIN, 0},
                      {stop_fd_.get(), POLLIN, 0},
                      {listen_fd_.get(), POLLIN, 0}};
      if (poll(nap, 3, static_cast<int>(options_.coalesce.count())) > 0 &&
          (nap[0].revents || nap[1].revents)) {
        stop_ = true;
      }
    }
  }
  Persist();
  unlink(MetricsAddressPath(options_.socket_path).c_str());
  spdlog::info("collector: stopped");
  return {};
}

bool Collector::Impl::Orphaned() const {
  struct stat st {};
  return lstat(options_.socket_path.c_str(), &st) != 0 ||
         stat(DirOf(options_.state_path).c_str(), &st) != 0;
}

void Collector::Impl::Accept() {
  for (;;) {
    UniqueFd fd(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;  // EAGAIN, or a connection that went away
    // The socket directory is 0700, but check the peer anyway: only our own uid (or root)
    // may report. The hello's token is checked next (HandleHello).
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        (cred.uid != geteuid() && cred.uid != 0)) {
      Refuse("uid", "a connection from uid " + std::to_string(cred.uid) + " (pid " +
                        std::to_string(cred.pid) + ")");
      continue;
    }
    // A launcher's ring (CollectorClient: connect and hang up, to end the nap) has hung up
    // already: nothing to serve, and it must not take the slot of a launcher that starts.
    char first;
    if (recv(fd.get(), &first, 1, MSG_PEEK | MSG_DONTWAIT) == 0) continue;
    if (connections_.size() >= options_.max_connections) {
      std::string e = wire::EncodeError("too many launchers connected");
      (void)!send(fd.get(), e.data(), e.size(), MSG_NOSIGNAL);
      spdlog::warn("collector: refused a launcher: {} connected", connections_.size());
      continue;
    }
    auto c = std::make_unique<Connection>();
    int key = fd.get();
    c->fd = std::move(fd);
    connections_[key] = std::move(c);
  }
}

void Collector::Impl::ReadFrom(Connection& c) {
  char buf[kReadChunk];
  size_t total = 0;
  while (!c.closing && total < kMaxReadPerTurn) {
    ssize_t n = read(c.fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Close(c);  // EOF or reset: the launcher keeps what we did not acknowledge
      return;
    }
    total += static_cast<size_t>(n);
    c.in.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; !c.closing && (nl = c.in.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      if (nl - start > wire::kMaxLineBytes) {
        Drop(c, "line longer than " + std::to_string(wire::kMaxLineBytes) + " bytes");
        return;
      }
      HandleLine(c, std::string_view(c.in).substr(start, nl - start));
    }
    if (c.closing) return;
    if (total >= kMaxReadPerTurn) behind_ = true;  // a flood: read on at once, no nap
    c.in.erase(0, start);
    if (c.in.size() > wire::kMaxLineBytes) {
      Drop(c, "line longer than " + std::to_string(wire::kMaxLineBytes) + " bytes");
      return;
    }
  }
}

void Collector::Impl::HandleHello(Connection& c, std::string_view line) {
  auto hello = parser_.ParseHello(line);
  if (!hello) {
    Drop(c, hello.error().message);
    return;
  }
  if (!TokensEqual(hello->token, token_)) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    getsockopt(c.fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len);
    Refuse("token", "a hello for " + hello->extension + " from pid " + std::to_string(cred.pid) +
                        (hello->token.empty() ? " without the token" : " with a wrong token"));
    Drop(c, "hello without the collector's token (" + options_.token_path + ")");
    return;
  }
  c.hello = std::move(hello).value();
  const std::string& ext = c.hello.extension;
  if (!extensions_.contains(ext)) {
    if (extensions_.size() >= options_.limits.extensions) {
      Drop(c, "more than " + std::to_string(options_.limits.extensions) + " extensions");
      return;
    }
    extensions_.insert(ext);
  }
  c.greeted = true;
  LauncherLedger::Entry& entry = ledger_.Touch(c.hello.launcher, ext, NowUnix());
  metrics_->OnHello(c.hello);
  c.running = c.hello.running;
  c.audit = AuditLogFor(c.hello);
  c.applied = entry.last_seq;
  c.acked = entry.last_seq;
  c.out += wire::EncodeWelcome(entry.last_seq);
  UpdateRunning(ext);
  MarkDirty();
  WriteReplies(c);
}

void Collector::Impl::HandleLine(Connection& c, std::string_view line) {
  if (!c.greeted) {
    HandleHello(c, line);
    return;
  }
  auto parsed = parser_.ParseLine(line);
  if (!parsed) {
    Drop(c, parsed.error().message);
    return;
  }
  LauncherLine& l = *parsed;
  if (l.kind == LauncherLine::Kind::kSync) {
    persist_now_ = true;  // a launcher is exiting: acknowledge at the end of this turn
    return;
  }
  if (l.kind == LauncherLine::Kind::kBye) {
    // Everything was acknowledged (the client waits for that): nothing of this launcher
    // will ever be resent.
    ledger_.Forget(c.hello.launcher);
    MarkDirty();
    Close(c);
    return;
  }
  switch (ledger_.Classify(c.hello.launcher, l.seq)) {
    case LauncherLedger::Check::kDuplicate:
      c.applied = std::max(c.applied, l.seq);
      return;  // applied before a restart or a reconnection: acknowledged again, not counted
    case LauncherLedger::Check::kGap:
      Drop(c, "record " + std::to_string(l.seq) + " after " +
                  std::to_string(ledger_.LastSeq(c.hello.launcher)));
      return;
    case LauncherLedger::Check::kApply:
      break;
  }
  if (l.event.extension != c.hello.extension) {
    Drop(c, "event for another extension");
    return;
  }
  if (const auto* lc = std::get_if<events::LifecycleEvent>(&l.event.payload)) {
    bool was = c.running;
    if (lc->what == events::LifecyclePhase::kStart) c.running = true;
    if (lc->what == events::LifecyclePhase::kStop) c.running = false;
    if (was != c.running) UpdateRunning(c.hello.extension);
  }
  if (l.counted) metrics_->Apply(l.event, c.hello.home, l.backlog_gap);
  if (c.audit) {
    c.audit->PublishJson(l.event_json);
  } else if (options_.write_audit_logs && !c.hello.audit_log_local) {
    metrics_->CountDropped(c.hello.extension, wire::kStageAuditLog, 1);
  }
  ledger_.Applied(c.hello.launcher, l.seq);
  c.applied = l.seq;
  ++unpersisted_;
  MarkDirty();
  applied_this_turn_ = true;
}

AuditLog* Collector::Impl::AuditLogFor(const wire::Hello& hello) {
  if (!options_.write_audit_logs || hello.audit_log_local) return nullptr;
  // The path is ours: the state directory and the extension name ParseHello validated (no
  // slash, not "." or "..").
  std::string path = DefaultAuditLogFor(hello.extension);
  if (auto it = audit_logs_.find(path); it != audit_logs_.end()) return it->second.get();
  AuditLogOptions o;
  o.path = path;
  if (hello.audit_log_max_bytes) o.max_bytes = hello.audit_log_max_bytes;
  if (hello.audit_log_max_files) o.max_files = hello.audit_log_max_files;
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    mkdir(path.substr(0, slash).c_str(), 0700);
  }
  auto log = AuditLog::Open(o);
  if (!log) {
    spdlog::warn("collector: {}: no audit log: {}", hello.extension, log.error().Describe());
    return nullptr;
  }
  audit_owner_[path] = hello.extension;
  return (audit_logs_[path] = std::move(log).value()).get();
}

void Collector::Impl::UpdateRunning(const std::string& extension) {
  int64_t n = 0;
  for (const auto& [fd, c] : connections_) {
    if (!c->closing && c->greeted && c->running && c->hello.extension == extension) ++n;
  }
  metrics_->SetRunning(extension, n);
}

void Collector::Impl::Drop(Connection& c, const std::string& reason) {
  spdlog::warn("collector: disconnecting launcher {} ({}): {}", c.greeted ? c.hello.launcher : "?",
               c.greeted ? c.hello.extension : "no hello", reason);
  c.out += wire::EncodeError(reason);
  WriteReplies(c);
  Close(c);
}

void Collector::Impl::Refuse(std::string_view reason, const std::string& detail) {
  metrics_->CountRefused(reason);
  spdlog::warn("collector: refused {}", detail);
}

void Collector::Impl::Close(Connection& c) {
  if (c.closing) return;
  c.closing = true;
  if (c.greeted) UpdateRunning(c.hello.extension);
  c.fd.Reset();
}

void Collector::Impl::WriteReplies(Connection& c) {
  while (c.fd && !c.out.empty()) {
    ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {
      Close(c);
      return;
    }
    c.out.erase(0, static_cast<size_t>(n));
  }
  if (c.out.size() > kMaxPendingReplies) {
    c.out.clear();
    spdlog::warn("collector: launcher {} does not read its acknowledgements", c.hello.launcher);
    Close(c);
  }
}

bool Collector::Impl::TryServeMetrics() {
  // HOST:PORT, then (another user's collector on it) the next ports, when allowed.
  size_t colon = options_.listen.rfind(':');
  int port = colon == std::string::npos ? 0 : std::atoi(options_.listen.c_str() + colon + 1);
  int tries = port > 0 ? std::max(1, options_.listen_ports_to_try) : 1;
  for (int i = 0; i < tries && !exposer_; ++i) {
    std::string address =
        i == 0 ? options_.listen : options_.listen.substr(0, colon + 1) + std::to_string(port + i);
    try {  // prometheus-cpp reports a failed bind by exception
      exposer_ = std::make_unique<prometheus::Exposer>(address, 2);
      options_.listen = address;
    } catch (const std::exception&) {
    }
  }
  if (!exposer_) return false;
  exposer_->RegisterCollectable(store_);
  // Where this user's /metrics is, next to the socket (a 0700 directory): `gander status`
  // reads it, so it asks this user's collector and not whatever listens on 9477.
  std::string path = MetricsAddressPath(options_.socket_path);
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    std::string line = options_.listen + "\n";
    bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    close(fd);
    if (!written || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
  }
  return true;
}

void Collector::Impl::Persist() {
  // The order is the guarantee: audit lines handed to the kernel, then the state with the
  // sequence numbers, then the acknowledgements.
  for (auto& [path, log] : audit_logs_) {
    log->Flush();
    uint64_t lost = log->stats().lines_lost;
    if (lost > audit_lost_[path]) {
      metrics_->CountDropped(audit_owner_[path], wire::kStageAuditLog, lost - audit_lost_[path]);
      audit_lost_[path] = lost;
      if (log->last_error()) {
        spdlog::warn("collector: audit log {}: {}", path, log->last_error()->Describe());
      }
    }
  }
  if (auto s =
          SaveState(options_.state_path, next_generation_, *store_, metrics_->bounds(), ledger_);
      !s) {
    // Never the same number twice: what a failed save left in its slot may be whole, and a
    // retry torn by a crash would then read as whole too. +2 keeps the slot, so the other one,
    // the last save that succeeded, stays as it is.
    next_generation_ += 2;
    // Nothing is acknowledged: launchers keep their records and we try again.
    persist_due_ = Clock::now() + options_.persist_interval;
    if (s.error().Describe() != last_persist_error_) {
      last_persist_error_ = s.error().Describe();
      spdlog::error("collector: cannot save state: {}", last_persist_error_);
    }
    return;
  }
  ++next_generation_;
  last_persist_error_.clear();
  dirty_ = false;
  unpersisted_ = 0;
  for (auto& [fd, c] : connections_) {
    if (c->closing || !c->greeted || c->applied <= c->acked) continue;
    c->out += wire::EncodeAck(c->applied);
    c->acked = c->applied;
    WriteReplies(*c);
  }
}

Result<std::unique_ptr<Collector>> Collector::Start(CollectorOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (auto s = impl->Init(); !s) return std::move(s).error();
  return std::unique_ptr<Collector>(new Collector(std::move(impl)));
}

Collector::Collector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Collector::~Collector() = default;
Status Collector::Run() { return impl_->Run(); }
void Collector::RequestStop() { impl_->RequestStop(); }

void BlockStopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
}

}  // namespace gander::exporters::collector
