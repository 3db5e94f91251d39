#include "common/security/job_keys.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/durable_file.h"
#include "common/strings.h"

namespace lockstep {
namespace {

constexpr const char* kRoleNames[kKeyRoles] = {"coordinator", "server",
                                               "worker", "admin"};
constexpr size_t kZ85KeyChars = 40;
constexpr size_t kCurveKeyBytes = 32;

// "PATH: 'NAME' PROBLEM", an error about one line of a key file.
Status LineError(const std::string& path, const std::string& name,
                 const char* problem) {
  std::string text = path;
  text += ": '";
  text += name;
  text += "' ";
  text += problem;
  return InvalidArgument(std::move(text));
}

bool ValidZ85Key(const std::string& text) {
  if (text.size() != kZ85KeyChars) return false;
  uint8_t raw[kCurveKeyBytes];
  return zmq_z85_decode(raw, text.c_str()) != nullptr;
}

// The file's "name value" lines. Errors name the line, never its value.
StatusOr<std::map<std::string, std::string>> ParseLines(
    const std::string& text, const std::string& path) {
  std::map<std::string, std::string> fields;
  int number = 0;
  for (const std::string& raw : SplitString(text, '\n')) {
    ++number;
    // Z85 keys may hold '#': only a line that starts with it is a comment.
    const std::string line = TrimWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    if (space == std::string::npos) {
      return InvalidArgument(path + " line " + std::to_string(number) +
                             ": expected 'name value'");
    }
    const std::string name = line.substr(0, space);
    if (!fields.emplace(name, TrimWhitespace(line.substr(space))).second) {
      return LineError(path, name, "given twice");
    }
  }
  return fields;
}

// Checks the open file `fd` of `path`: what is read is what was checked.
Status CheckPermissions(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return IOError("cannot read the key file " + path + ": " +
                   std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument("the key file " + path + " is not a file");
  }
  // A mounted Kubernetes Secret may be a symlink to a file readable by the
  // pod's group (defaultMode 0440); anything others may read is refused.
  if ((st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%03o", st.st_mode & 0777);
    return FailedPrecondition("the key file " + path + " has mode " + mode +
                              ": others may read it; chmod 600 " + path);
  }
  // Another user's key file is another user's secret (or a swapped one):
  // only this user's or root's (a mounted Secret) are taken.
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return FailedPrecondition("the key file " + path + " belongs to uid " +
                              std::to_string(st.st_uid) +
                              ", not to this user (uid " +
                              std::to_string(geteuid()) + ") or root");
  }
  return Status::Ok();
}

StatusOr<RoleKeys> KeysFromFields(std::map<std::string, std::string> fields,
                                  const std::string& path) {
  auto take = [&](const std::string& name) -> StatusOr<std::string> {
    auto it = fields.find(name);
    if (it == fields.end()) {
      return InvalidArgument(path + ": no '" + name + "' line");
    }
    std::string value = std::move(it->second);
    fields.erase(it);
    return value;
  };
  RoleKeys keys;
  LS_ASSIGN_OR_RETURN(const std::string role, take("role"));
  LS_ASSIGN_OR_RETURN(keys.role, ParseKeyRole(role));
  LS_ASSIGN_OR_RETURN(const std::string mode, take("data-plane"));
  LS_ASSIGN_OR_RETURN(keys.data_plane, ParseDataSecurity(mode));
  LS_ASSIGN_OR_RETURN(keys.secret, take("secret"));
  if (!ValidZ85Key(keys.secret)) {
    return InvalidArgument(path + ": 'secret' is not a Z85 CurveZMQ key");
  }
  for (int r = 0; r < kKeyRoles; ++r) {
    const std::string name = std::string("public-") + kRoleNames[r];
    LS_ASSIGN_OR_RETURN(keys.publics[r], take(name));
    if (!ValidZ85Key(keys.publics[r])) {
      return LineError(path, name, "is not a Z85 CurveZMQ key");
    }
  }
  if (auto it = fields.find("credential"); it != fields.end()) {
    const std::string number = it->second;
    fields.erase(it);
    char* end = nullptr;
    const long long n = std::strtoll(number.c_str(), &end, 10);
    if (keys.role != KeyRole::kWorker || number.empty() || *end != '\0' ||
        n < 0 || n > INT32_MAX) {
      return LineError(path, "credential",
                       "is not a worker credential's number");
    }
    keys.credential = n;
  }
  // Key files of protocol 7 and before shared one data secret between
  // servers and workers; the data plane now proves tickets
  // (peer_ticket.h), so an old run's keys still load, without it.
  fields.erase("data-secret");
  if (!fields.empty()) {
    return InvalidArgument(path + ": unknown line '" + fields.begin()->first +
                           "'");
  }
  return keys;
}

}  // namespace

const char* KeyRoleName(KeyRole role) {
  return kRoleNames[static_cast<int>(role)];
}

StatusOr<KeyRole> ParseKeyRole(const std::string& name) {
  for (int r = 0; r < kKeyRoles; ++r) {
    if (name == kRoleNames[r]) return static_cast<KeyRole>(r);
  }
  return InvalidArgument("unknown key role '" + name +
                         "' (coordinator, server, worker or admin)");
}

std::string KeyFileName(KeyRole role) {
  return std::string(KeyRoleName(role)) + ".key";
}

const char* DataSecurityName(DataSecurity mode) {
  return mode == DataSecurity::kAead ? "aead" : "auth";
}

StatusOr<DataSecurity> ParseDataSecurity(const std::string& name) {
  if (name == "auth") return DataSecurity::kAuth;
  if (name == "aead") return DataSecurity::kAead;
  return InvalidArgument("unknown data-plane security '" + name +
                         "' (auth or aead)");
}

std::optional<KeyRole> RoleKeys::RoleOfPublicKey(const std::string& key) const {
  if (key.size() != kCurveKeyBytes) return std::nullopt;
  for (int r = 0; r < kKeyRoles; ++r) {
    uint8_t raw[kCurveKeyBytes];
    if (zmq_z85_decode(raw, publics[r].c_str()) == nullptr) continue;
    if (std::memcmp(raw, key.data(), kCurveKeyBytes) == 0) {
      return static_cast<KeyRole>(r);
    }
  }
  return std::nullopt;
}

StatusOr<RoleKeys> LoadRoleKeys(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NotFound("cannot read the key file " + path + ": " +
                    std::strerror(errno));
  }
  Status checked = CheckPermissions(fd, path);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while (checked.ok() && (n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || text.size() > (64u << 10)) {
      checked = IOError("cannot read the key file " + path);
      break;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  LS_RETURN_IF_ERROR(checked);
  LS_ASSIGN_OR_RETURN(auto fields, ParseLines(text, path));
  return KeysFromFields(std::move(fields), path);
}

std::string FormatRoleKeys(const RoleKeys& keys) {
  std::string text = std::string("# Lockstep job key of the ") +
                     KeyRoleName(keys.role) +
                     " role. Secret: keep it mode 0600; pass it by path.\n";
  text += std::string("role ") + KeyRoleName(keys.role) + "\n";
  text += std::string("data-plane ") + DataSecurityName(keys.data_plane) + "\n";
  text += "secret " + keys.secret + "\n";
  for (int r = 0; r < kKeyRoles; ++r) {
    text +=
        std::string("public-") + kRoleNames[r] + " " + keys.publics[r] + "\n";
  }
  if (keys.credential >= 0) {
    text += "credential " + std::to_string(keys.credential) + "\n";
  }
  return text;
}

Status WriteJobKeys(const std::string& dir, DataSecurity data_plane,
                    WorkerKeys workers) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IOError("cannot create " + dir + ": " + ec.message());
  // Closed to others before any key is in it.
  if (chmod(dir.c_str(), 0700) != 0) {
    return IOError("cannot set the mode of " + dir + ": " +
                   std::strerror(errno));
  }
  for (int r = 0; r < kKeyRoles; ++r) {
    const std::string path = dir + "/" + KeyFileName(static_cast<KeyRole>(r));
    if (std::filesystem::exists(path)) {
      return FailedPrecondition(path +
                                " exists: a job's keys are never replaced");
    }
  }
  std::array<std::string, kKeyRoles> secrets;
  RoleKeys keys;
  keys.data_plane = data_plane;
  for (int r = 0; r < kKeyRoles; ++r) {
    char pub[kZ85KeyChars + 1], sec[kZ85KeyChars + 1];
    if (zmq_curve_keypair(pub, sec) != 0) {
      return Internal("cannot make CurveZMQ keys (libzmq without CURVE?)");
    }
    keys.publics[r] = pub;
    secrets[r] = sec;
  }
  for (int r = 0; r < kKeyRoles; ++r) {
    keys.role = static_cast<KeyRole>(r);
    if (keys.role == KeyRole::kWorker && workers == WorkerKeys::kCredentials) {
      continue;
    }
    keys.secret = secrets[r];
    LS_RETURN_IF_ERROR(WriteFileDurably(dir + "/" + KeyFileName(keys.role),
                                        FormatRoleKeys(keys), 0600));
  }
  return Status::Ok();
}

}  // namespace lockstep
