// Clang thread-safety annotations (-Wthread-safety). The build compiles
// with GCC, which ignores them; scripts/lint.sh runs clang-tidy with
// -Wthread-safety, so a member read without its mutex held is a finding.
// Annotate members with GUARDED_BY(mu_) and use lockstep::Mutex /
// MutexLock (common/mutex.h), whose capability Clang tracks.
#ifndef LOCKSTEP_COMMON_THREAD_ANNOTATIONS_H_
#define LOCKSTEP_COMMON_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define LS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define LS_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) LS_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY LS_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) LS_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) LS_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) LS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) LS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) LS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) LS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS \
  LS_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // LOCKSTEP_COMMON_THREAD_ANNOTATIONS_H_
