// ThreadSanitizer's view of absl::Mutex, absl::CondVar and
// absl::Notification, for the TSan build only (scripts/sanitize.sh tsan
// LD_PRELOADs this library into every test and node it runs).
//
// Why: Debian's libabsl_synchronization is not built with TSan, so the
// happens-before edges of its locks are invisible to TSan, and every field
// guarded by an absl::Mutex would be reported as a race. Abseil annotates
// its own locks for TSan only when it is itself compiled with TSan; we
// cannot rebuild Debian's Abseil (no sources), and a second, instrumented
// Abseil in one process beside the one gRPC links would break the one
// definition rule. So this library interposes the out-of-line entry points
// our code calls through the PLT, tells TSan what they do with the
// __tsan_mutex_* annotations (the same calls Abseil's TSan build makes),
// and forwards to Debian's implementation (dlsym(RTLD_NEXT)).
//
// What is modelled: Lock/Unlock and the reader forms (also lock-order
// inversions, which TSan then reports as potential deadlocks); Await,
// LockWhen and CondVar waits release and reacquire the mutex; a Condition
// is evaluated between an acquire and a release of its mutex (Abseil
// evaluates it with the mutex held, in the waiter or in the thread that
// unlocks); Notify releases and the waits acquire; the last release of an
// absl::Status's shared representation frees it after every other
// holder's use. Not modelled: TryLock failing (treated as no lock taken,
// which is what it is) and Abseil's internal spinlocks (not ours).
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/base/config.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

// This library is itself not instrumented, and its references to TSan's
// runtime are weak: LD_PRELOAD reaches every child process, TSan's own
// llvm-symbolizer included, which has no TSan runtime to resolve them.
#pragma weak __tsan_acquire
#pragma weak __tsan_release
#pragma weak __tsan_mutex_destroy
#pragma weak __tsan_mutex_pre_lock
#pragma weak __tsan_mutex_post_lock
#pragma weak __tsan_mutex_pre_unlock
#pragma weak __tsan_mutex_post_unlock

namespace {

// "_ZN4absl<len><inline namespace>" + rest: the mangled name of a member of
// Abseil's inline namespace, whatever Debian named it.
template <typename Fn>
Fn Real(const char* rest) {
  const std::string ns =
      ABSL_INTERNAL_TOKEN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name = "_ZN4absl" + std::to_string(ns.size()) + ns + rest;
  void* p = dlsym(RTLD_NEXT, name.c_str());
  if (p == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

// const members mangle as _ZNK...: Real() builds _ZN..., so those take the
// whole name.
template <typename Fn>
Fn RealConst(const char* rest) {
  const std::string ns =
      ABSL_INTERNAL_TOKEN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name = "_ZNK4absl" + std::to_string(ns.size()) + ns + rest;
  void* p = dlsym(RTLD_NEXT, name.c_str());
  if (p == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

void Locked(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
}
void Unlocking(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags);
  __tsan_mutex_post_unlock(mu, flags);
}

// A Condition evaluated as Abseil evaluates it: with its mutex held, by the
// waiter or by the thread that unlocks. So it acquires the mutex's history
// before it reads, and releases after, so that its reads happen before the
// next holder's writes (without the release, TSan sees a waiter's first
// evaluation, which comes after Await's Unlocking(), race with them).
struct Guarded {
  const absl::Condition* condition;
  absl::Mutex* mu;
};
bool EvalGuarded(Guarded* g) {
  __tsan_acquire(g->mu);
  const bool result = g->condition->Eval();
  __tsan_release(g->mu);
  return result;
}

// True when `pc` lies in one of Debian's libraries that are not built with
// TSan (gRPC and its dependencies, Abseil, protobuf).
bool InUninstrumentedLibrary(const void* pc) {
  Dl_info info;
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr) return false;
  for (const char* lib : {"libgrpc", "libgpr", "libabsl_", "libprotobuf",
                          "libupb", "libre2", "libcares"}) {
    if (std::strstr(info.dli_fname, lib) != nullptr) return true;
  }
  return false;
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex4LockEv");
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::Unlock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_mutex_pre_unlock(this, 0);
  real(this);
  __tsan_mutex_post_unlock(this, 0);
}

bool Mutex::TryLock() {
  static const auto real = Real<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool locked = real(this);
  __tsan_mutex_post_lock(
      this, __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed),
      0);
  return locked;
}

void Mutex::ReaderLock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_lock(this, __tsan_mutex_read_lock, 0);
}

void Mutex::ReaderUnlock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  __tsan_mutex_pre_unlock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_unlock(this, __tsan_mutex_read_lock);
}

// A mutex that gRPC's own code destroys is not annotated as destroyed:
// TSan cannot see how gRPC orders that after the mutex's last use in its
// other threads (the hand-offs of tsan_ignorelist.txt), and reported every
// such destruction as racing with that use. Its lock and unlock annotations
// stay, since gRPC's locks order our callbacks too.
Mutex::~Mutex() {
  static const auto real = Real<void (*)(Mutex*)>("5MutexD2Ev");
  if (!InUninstrumentedLibrary(__builtin_return_address(0))) {
    __tsan_mutex_destroy(this, 0);
  }
  real(this);
}

// The waits: held before and after, released while waiting.
//
// DeadlineOf: the *WithTimeout forms are this library's *WithDeadline with
// Now() + timeout (saturating: an infinite timeout is an infinite
// deadline), which is what Abseil's own do: Debian's tail-call their
// *WithDeadline through the PLT, so forwarding to them would reach our
// *WithDeadline and annotate every wait twice (TSan: "unlock of an
// unlocked mutex", in gRPC's timed waits).
void Mutex::Await(const Condition& cond) {
  static const auto real = Real<void (*)(Mutex*, const Condition&)>(
      "5Mutex5AwaitERKNS0_9ConditionE");
  Guarded g{&cond, this};
  const Condition guarded(&EvalGuarded, &g);
  Unlocking(this, 0);
  real(this, guarded);
  Locked(this, 0);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  return AwaitWithDeadline(cond, Now() + timeout);  // see DeadlineOf
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static const auto real = Real<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  Guarded g{&cond, this};
  const Condition guarded(&EvalGuarded, &g);
  Unlocking(this, 0);
  const bool met = real(this, guarded, deadline);
  Locked(this, 0);
  return met;
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real = Real<void (*)(Mutex*, const Condition&)>(
      "5Mutex8LockWhenERKNS0_9ConditionE");
  Guarded g{&cond, this};
  const Condition guarded(&EvalGuarded, &g);
  __tsan_mutex_pre_lock(this, 0);
  real(this, guarded);
  __tsan_mutex_post_lock(this, 0, 0);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  return LockWhenWithDeadline(cond, Now() + timeout);  // see DeadlineOf
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const auto real = Real<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  Guarded g{&cond, this};
  const Condition guarded(&EvalGuarded, &g);
  __tsan_mutex_pre_lock(this, 0);
  const bool met = real(this, guarded, deadline);
  __tsan_mutex_post_lock(this, 0, 0);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real =
      Real<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  Unlocking(mu, 0);
  real(this, mu);
  Locked(mu, 0);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  return WaitWithDeadline(mu, Now() + timeout);  // see DeadlineOf
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static const auto real = Real<bool (*)(CondVar*, Mutex*, Time)>(
      "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  Unlocking(mu, 0);
  const bool timed_out = real(this, mu, deadline);
  Locked(mu, 0);
  return timed_out;
}

void Notification::Notify() {
  static const auto real =
      Real<void (*)(Notification*)>("12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real = RealConst<void (*)(const Notification*)>(
      "12Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  static const auto real = RealConst<bool (*)(const Notification*, Duration)>(
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  static const auto real = RealConst<bool (*)(const Notification*, Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

// absl::Status shares one reference-counted StatusRep among its copies; the
// last copy to go frees it, inside Debian's libabsl_status, whose atomic
// decrement TSan cannot see. So a copy read in one thread (its message())
// and the last copy released in another were reported as a race with the
// free (store_disk_fault_test: four writers handed the same refusal). The
// decrement is acquire-release: each holder's accesses happen before the
// free, which is what this tells TSan.
void Status::UnrefNonInlined(uintptr_t rep) {
  static const auto real =
      Real<void (*)(uintptr_t)>("6Status15UnrefNonInlinedEm");
  void* const shared = reinterpret_cast<void*>(rep - 1);  // RepToPointer
  __tsan_release(shared);
  __tsan_acquire(shared);
  real(rep);
}

ABSL_NAMESPACE_END
}  // namespace absl
