#include "common/descriptor_limit.h"

#include <sys/resource.h>

#include "common/logging.h"

namespace lockstep {

uint64_t RaiseDescriptorLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  const rlim_t before = files.rlim_cur;
  if (files.rlim_cur == files.rlim_max) return before;
  files.rlim_cur = files.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &files) != 0) return before;
  LS_LOG(Info) << "raised the open-file limit from " << before << " to "
               << files.rlim_cur;
  return files.rlim_cur;
}

}  // namespace lockstep
