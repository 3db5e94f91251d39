#include "coordinator/faults/credential_bans.h"

#include <filesystem>

#include "common/durable_file.h"
#include "common/logging.h"
#include "common/strings.h"

namespace lockstep {
namespace {

constexpr const char* kFileName = "/banned-credentials";

}  // namespace

Status CredentialBans::Load() {
  if (run_dir_.empty()) return Status::Ok();
  const std::string path = run_dir_ + kFileName;
  if (!std::filesystem::exists(path)) return Status::Ok();
  LS_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  // "keys <Z85>", then "<credential> <why>" a line.
  const std::vector<std::string> lines = SplitString(text, '\n');
  if (lines.empty() || lines[0] != "keys " + job_key_) {
    LS_LOG(Info) << path << " holds bans of other keys: none taken";
    return Status::Ok();
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    char* end = nullptr;
    const long long credential = std::strtoll(lines[i].c_str(), &end, 10);
    if (end == lines[i].c_str() || credential < 0 ||
        (*end != ' ' && *end != '\0')) {
      return InvalidArgument(path + " line " + std::to_string(i + 1) +
                             ": not '<credential> <why>'");
    }
    bans_[credential] = TrimWhitespace(end);
  }
  if (!bans_.empty()) {
    LS_LOG(Info) << bans_.size()
                 << " worker credential(s) stay banned from this job (" << path
                 << ")";
  }
  return Status::Ok();
}

void CredentialBans::Ban(int64_t credential, const std::string& why) {
  if (credential < 0 || !bans_.emplace(credential, why).second) return;
  LS_LOG(Warning) << "worker credential " << credential
                  << " may not register again: " << why
                  << " (issue a new one with lockstep-keys --issue-worker)";
  if (run_dir_.empty()) return;
  Status written = WriteFileDurably(run_dir_ + kFileName, FileText());
  if (!written.ok()) {
    LS_LOG(Warning) << "the ban holds until this coordinator ends: "
                    << written.message();
  }
}

std::string CredentialBans::FileText() const {
  std::string text = "keys " + job_key_ + "\n";
  for (const auto& [credential, why] : bans_) {
    std::string line = why;
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    text += std::to_string(credential) + " " + line + "\n";
  }
  return text;
}

void CredentialBans::AddMetrics(PrometheusText* text) const {
  text->Add("lockstep_banned_credentials", static_cast<double>(bans_.size()));
  text->Add(
      "lockstep_refused_registrations_total{reason=\"banned_credential\"}",
      static_cast<double>(refused_));
}

}  // namespace lockstep
