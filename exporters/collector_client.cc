// The launcher's side of the collector protocol (see collector_client.h).
#include "exporters/collector_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "common/unix_socket.h"
#include "exporters/collector_paths.h"
#include "exporters/collector_token.h"

namespace gander::exporters {
namespace {

constexpr size_t kWriteChunk = 64 * 1024;

std::string NewLauncherId() {
  unsigned char bytes[12] = {};
  if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
    // No entropy source: pid and clock are unique enough on one host.
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::to_string(getpid()) + "-" + std::to_string(ts.tv_sec) + "-" +
           std::to_string(ts.tv_nsec);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = std::to_string(getpid()) + "-";
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

// A rough size, to bound the backlog in bytes without encoding every event twice.
size_t ApproxBytes(const events::Event& e) {
  size_t n = sizeof(events::Event) + e.extension.size() + e.executable.size();
  if (e.tool_call.call) n += e.tool_call.call->tool.size() + e.tool_call.call->request_id.size();
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, events::FileEvent>) {
          n += p.raw_path.size() + (p.path ? p.path->size() : 0) + p.syscall.size();
        } else if constexpr (std::is_same_v<T, events::ProcessEvent>) {
          n += p.path.size();
          for (const auto& a : p.argv) n += a.size() + sizeof(std::string);
        } else if constexpr (std::is_same_v<T, events::NetworkEvent>) {
          n += p.host.size() + p.ip.size();
        } else if constexpr (std::is_same_v<T, events::LifecycleEvent>) {
          n += p.detail.size();
        }
      },
      e.payload);
  return n;
}

void MakeParentDirs(const std::string& file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    mkdir(file.substr(0, slash).c_str(), 0700);
  }
}

}  // namespace

std::unique_ptr<CollectorClient> CollectorClient::Create(CollectorClientOptions options) {
  if (options.socket_path.empty()) options.socket_path = DefaultCollectorSocket();
  if (options.token_path.empty()) options.token_path = DefaultCollectorTokenPath();
  if (options.hello.launcher.empty()) options.hello.launcher = NewLauncherId();
  if (options.audit_log.path.empty()) {
    options.audit_log.path = DefaultAuditLogFor(options.hello.extension);
  }
  // The collector only ever writes its own default path; any other is ours to write.
  options.hello.audit_log_local =
      options.audit_log.path != DefaultAuditLogFor(options.hello.extension);
  options.hello.audit_log_max_bytes = options.audit_log.max_bytes;
  options.hello.audit_log_max_files = options.audit_log.max_files;

  std::unique_ptr<CollectorClient> client(new CollectorClient(std::move(options)));
  if (client->options_.hello.audit_log_local) {
    MakeParentDirs(client->options_.audit_log.path);
    auto log = AuditLog::Open(client->options_.audit_log);
    if (!log) {
      client->fallback_failed_ = true;  // no log at all: nothing would write the events
      client->last_error_ = std::move(log).error().Context("audit log");
      return client;
    }
    client->own_log_ = std::move(log).value();
  }
  if (!client->timer_) {
    client->EnterFallback(ErrnoError("timerfd_create"));
    return client;
  }
  if (client->TryConnect()) return client;
  // None answers. Starting one is race-free without a lock of ours: the collector holds an
  // exclusive lock for its whole life and a second one exits at once, so launchers starting
  // together spawn a few collectors of which exactly one stays.
  const auto& start = client->options_.start_command;
  if (!start.empty()) {
    if (auto spawned = SpawnDetached(start); !spawned) {
      client->EnterFallback(std::move(spawned).error().Context("start collector"));
      return client;
    }
    client->next_start_ = Clock::now() + client->options_.restart_interval;
    auto deadline = Clock::now() + client->options_.start_wait;
    while (Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (client->TryConnect()) return client;
    }
  }
  client->EnterFallback(Error{ECONNREFUSED, "no collector at " + client->options_.socket_path});
  return client;
}

CollectorClient::CollectorClient(CollectorClientOptions options)
    : options_(std::move(options)),
      timer_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) {
  if (timer_) stable_fd_.Reset(fcntl(timer_.get(), F_DUPFD_CLOEXEC, 3));
}

CollectorClient::~CollectorClient() {
  if (fallback_) fallback_->Flush();
}

// A non-blocking connection to the collector's socket.
static Result<UniqueFd> ConnectToCollector(const std::string& path) {
  return ConnectUnix(path, SOCK_NONBLOCK);
}

bool CollectorClient::TryConnect() {
  auto connected = ConnectToCollector(options_.socket_path);
  if (!connected) {
    last_error_ = std::move(connected).error();
    return false;
  }
  UniqueFd sock = std::move(connected).value();
  // The socket takes the stable fd's number (closing the timer's duplicate there).
  if (dup3(sock.get(), stable_fd_.get(), O_CLOEXEC) < 0) {
    last_error_ = ErrnoError("dup3");
    return false;
  }
  connected_ = true;
  ++stats_.connections;
  options_.hello.running = running_;
  // Read at every connection: the collector creates the token before it binds its socket, and
  // a collector started since our last attempt may have made a new one.
  if (auto token = ReadCollectorToken(options_.token_path)) {
    options_.hello.token = std::move(token).value();
  } else {
    last_error_ = std::move(token).error().Context("collector token");
  }
  out_ = wire::EncodeHello(options_.hello);
  in_.clear();
  next_send_ = 0;  // resend everything unacknowledged; the welcome trims what was applied
  WriteOut();
  return connected_;
}

void CollectorClient::Disconnect(Error why) {
  last_error_ = std::move(why);
  connected_ = false;
  out_.clear();
  in_.clear();
  next_send_ = 0;
  rang_ = false;
  synced_ = 0;
  if (timer_) dup3(timer_.get(), stable_fd_.get(), O_CLOEXEC);  // closes the socket
  next_attempt_ = Clock::now() + options_.retry_interval;
  ArmTimer(options_.retry_interval);
}

void CollectorClient::EnterFallback(Error why) {
  last_error_ = std::move(why);
  if (connected_) Disconnect(*last_error_);
  if (timer_) {
    ArmTimer(std::chrono::milliseconds(0));  // disarmed: the fd never becomes readable
    dup3(timer_.get(), stable_fd_.get(), O_CLOEXEC);
  }
  if (own_log_) {
    // Every event is already in our own log: the backlog only waited for the collector.
    fallback_ = std::move(own_log_);
    backlog_.clear();
  } else {
    MakeParentDirs(options_.audit_log.path);
    auto log = AuditLog::Open(options_.audit_log);
    if (!log) {
      fallback_failed_ = true;
      last_error_ = std::move(log).error().Context("fallback audit log");
    } else {
      fallback_ = std::move(log).value();
    }
  }
  for (Record& r : backlog_) {
    if (fallback_) {
      fallback_->Publish(r.event);
      ++stats_.written_directly;
    } else {
      ++stats_.dropped;
    }
  }
  backlog_.clear();
  backlog_bytes_ = 0;
  next_send_ = 0;
  if (fallback_) fallback_->Flush();
}

void CollectorClient::ArmTimer(std::chrono::milliseconds after) {
  if (!timer_) return;
  itimerspec spec{};
  if (after.count() > 0) {
    spec.it_value.tv_sec = after.count() / 1000;
    spec.it_value.tv_nsec = (after.count() % 1000) * 1000000;
  }
  timerfd_settime(timer_.get(), 0, &spec, nullptr);
}

void CollectorClient::Append(events::Event event, bool backlog_gap) {
  Record r{next_seq_++, std::move(event), backlog_gap, 0};
  r.bytes = ApproxBytes(r.event);
  backlog_bytes_ += r.bytes;
  backlog_.push_back(std::move(r));
}

void CollectorClient::Publish(const events::Event& event) {
  ++stats_.published;
  if (const auto* l = std::get_if<events::LifecycleEvent>(&event.payload)) {
    if (l->what == events::LifecyclePhase::kStart) running_ = true;
    if (l->what == events::LifecyclePhase::kStop) running_ = false;
  }
  if (fallback_) {
    fallback_->Publish(event);
    ++stats_.written_directly;
    return;
  }
  if (fallback_failed_) {
    ++stats_.dropped;
    return;
  }
  if (own_log_) own_log_->Publish(event);  // the collector only counts it
  if (backlog_.size() >= options_.max_backlog_events ||
      backlog_bytes_ + ApproxBytes(event) > options_.max_backlog_bytes) {
    ++stats_.dropped;
    ++pending_drops_;
    last_dropped_.time_ns = event.time_ns;
    last_dropped_.extension = event.extension;
    return;
  }
  AppendDropNotice();
  Append(event, false);
}

void CollectorClient::AppendDropNotice() {
  if (pending_drops_ == 0) return;
  // The gap goes where it happened, as the monitor's queue does it (one record over the
  // bound, so that the notice itself is never lost).
  events::Event notice;
  notice.time_ns = last_dropped_.time_ns;
  notice.extension = last_dropped_.extension;
  notice.payload = events::LifecycleEvent{events::LifecyclePhase::kEventsDropped,
                                          std::to_string(pending_drops_)};
  pending_drops_ = 0;
  Append(std::move(notice), true);
}

void CollectorClient::Flush() { Service(false); }

void CollectorClient::OnReadable() { Service(true); }

void CollectorClient::Service(bool read_replies) {
  if (fallback_) {
    fallback_->Flush();
    return;
  }
  if (own_log_) own_log_->Flush();
  if (fallback_failed_) return;
  if (!connected_) {
    uint64_t expirations;
    while (read(timer_.get(), &expirations, sizeof(expirations)) > 0) {
    }
    auto now = Clock::now();
    if (now < next_attempt_) return;
    if (!TryConnect()) {
      if (!options_.start_command.empty() && now >= next_start_) {
        next_start_ = now + options_.restart_interval;
        (void)SpawnDetached(options_.start_command);  // a failure shows as the next refusal
      }
      next_attempt_ = now + options_.retry_interval;
      ArmTimer(options_.retry_interval);
      return;
    }
  }
  // Replies only come when poll says so (OnReadable): a read per flush would be one more
  // syscall per event on the extension's path, answered EAGAIN nearly always.
  if (read_replies) ReadReplies();
  if (connected_) WriteOut();
}

void CollectorClient::ReadReplies() {
  char buf[4096];
  for (;;) {
    ssize_t n = read(stable_fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Disconnect(n == 0 ? Error{ECONNRESET, "collector closed the connection"}
                        : ErrnoError("read from collector"));
      return;
    }
    in_.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = in_.find('\n', start)) != std::string::npos; start = nl + 1) {
      auto reply = wire::ParseReply(std::string_view(in_).substr(start, nl - start));
      if (!reply) {
        Disconnect(MakeError("collector sent an unreadable line"));
        return;
      }
      if (reply->kind == wire::Reply::Kind::kError) {
        // A refusal is not transient (bad input, another protocol version): stop trying.
        EnterFallback(MakeError("collector refused us: " + reply->reason));
        return;
      }
      TrimAcknowledged(reply->seq);
    }
    in_.erase(0, start);
    if (in_.size() > 4096) {
      Disconnect(MakeError("collector sent an overlong line"));
      return;
    }
  }
}

void CollectorClient::TrimAcknowledged(uint64_t seq) {
  size_t popped = 0;
  while (!backlog_.empty() && backlog_.front().seq <= seq) {
    backlog_bytes_ -= backlog_.front().bytes;
    backlog_.pop_front();
    ++popped;
    ++stats_.acked;
  }
  next_send_ = next_send_ > popped ? next_send_ - popped : 0;
  // The collector is reading: a buffer that fills again is rung for again (at most once per
  // acknowledgement, so a collector slower than us is not rung at every send).
  if (popped > 0) rang_ = false;
}

void CollectorClient::WriteOut() {
  while (connected_) {
    while (out_.size() < kWriteChunk && next_send_ < backlog_.size()) {
      const Record& r = backlog_[next_send_++];
      out_ += wire::EncodeRecord(r.seq, r.event, r.backlog_gap ? wire::kStageBacklog : "");
    }
    if (out_.empty()) {
      rang_ = false;
      return;
    }
    ssize_t n = send(stable_fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The socket's buffer is full: the collector may be in its coalesce nap. Ring once, so
      // that what is left here (only in our memory) is taken soon. The next ack wakes us.
      if (!std::exchange(rang_, true)) (void)ConnectToCollector(options_.socket_path);
      return;
    }
    if (n < 0) {
      Disconnect(ErrnoError("write to collector"));
      return;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
}

// Everything is sent: ask for the acknowledgement now rather than at the collector's next
// persist interval (up to 100 ms of exit latency otherwise), once per sequence number.
void CollectorClient::AskSync() {
  const uint64_t last = next_seq_ - 1;
  if (!connected_ || !out_.empty() || backlog_.empty() || synced_ == last) return;
  std::string sync = wire::EncodeSync(last);
  if (send(stable_fd_.get(), sync.data(), sync.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(sync.size())) {
    return;
  }
  synced_ = last;
  // The collector may be in its coalesce nap, not reading our socket: a connection, closed at
  // once, ends the nap (CollectorOptions::coalesce), so the exit does not wait for it.
  (void)ConnectToCollector(options_.socket_path);
}

void CollectorClient::StartFinish() {
  AppendDropNotice();
  if (fallback()) return;
  OnReadable();
  AskSync();
}

void CollectorClient::Finish(std::chrono::milliseconds budget) {
  auto deadline = Clock::now() + budget;
  AppendDropNotice();
  while (!fallback() && Clock::now() < deadline) {
    OnReadable();
    AskSync();
    if (connected_ && backlog_.empty() && out_.empty()) {
      std::string bye = wire::EncodeBye(next_seq_ - 1);
      (void)send(stable_fd_.get(), bye.data(), bye.size(), MSG_NOSIGNAL);
      Disconnect(MakeError("finished"));
      last_error_.reset();
      ArmTimer(std::chrono::milliseconds(0));
      return;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{stable_fd_.get(), static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
    poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 1, 50)));
  }
  if (!backlog_.empty()) {
    size_t left = backlog_.size();
    EnterFallback(Error{ETIMEDOUT, "collector did not acknowledge " + std::to_string(left) +
                                       " events in time; written to the audit log directly"});
  }
}

}  // namespace gander::exporters
