// How a Lockstep binary is given its job key: `--keys PATH` (or the
// environment's LOCKSTEP_KEYS, for a cluster engine that mounts the keys),
// PATH its role's key file or a folder holding it as ROLE.key; or, by
// explicit choice only, `--security off`. Security is on by
// default: a binary given neither refuses to start.
// Thread-safety: reentrant.
#ifndef LOCKSTEP_COMMON_SECURITY_KEY_FLAGS_H_
#define LOCKSTEP_COMMON_SECURITY_KEY_FLAGS_H_

#include <boost/program_options.hpp>
#include <initializer_list>
#include <optional>

#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

// Adds --keys and --security.
void AddSecurityFlags(boost::program_options::options_description* options);

// The key file `path` (empty: $LOCKSTEP_KEYS; a folder: its file of the
// first of `roles`) loaded and checked to be one of `roles`; nullopt when
// `security` is "off" (logged as a warning). Errors: no key and security not
// off, a key given with security off, a key of another role, an unreadable or
// malformed file.
StatusOr<std::optional<RoleKeys>> ResolveJobKeys(
    const std::string& path, const std::string& security,
    std::initializer_list<KeyRole> roles);
// ResolveJobKeys of --keys and --security.
StatusOr<std::optional<RoleKeys>> KeysFromFlags(
    const boost::program_options::variables_map& vm,
    std::initializer_list<KeyRole> roles);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SECURITY_KEY_FLAGS_H_
