// The two orderings gRPC gives a callback reactor, made visible to
// ThreadSanitizer.
//
// gRPC runs a reactor's reactions (OnWriteDone, OnCancel) only after the
// handler that made it has returned it, and OnDone only after every other
// reaction has returned. Both orderings are made inside Debian's gRPC,
// which is not built with TSan, so TSan saw none of them: it reported a
// reaction's first read of the reactor, in one gRPC thread, against the
// constructor in another, and OnCancel's critical section against OnDone's
// deletion (docs/hardening.md, "Sanitizers").
//
// - A handler returns a reactor through Published(): TSan builds record
//   the construction as released there; every reaction begins with
//   ReactionStarts(this), which acquires it. Nothing else happens, and no
//   order is implied between two reactions (they may run concurrently).
// - OnDone deletes through DeleteAfterLastCriticalSection(): our reactors
//   keep their state in a call object that the task pool's jobs share,
//   under the call's mutex, so taking it once before deleting orders the
//   deletion after every critical section on the call, reactions' and
//   jobs' alike, whatever gRPC guarantees, and TSan sees that order.
// Thread safety: as gRPC calls reactors.
#ifndef LAYERPROOF_RPC_REACTOR_H_
#define LAYERPROOF_RPC_REACTOR_H_

#include "absl/synchronization/mutex.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define LAYERPROOF_RPC_REACTOR_TSAN 1
#endif
#endif

namespace layerproof::rpc {

template <typename Reactor>
Reactor* Published(Reactor* reactor) {
#ifdef LAYERPROOF_RPC_REACTOR_TSAN
  __tsan_release(reactor);
#endif
  return reactor;
}

inline void ReactionStarts([[maybe_unused]] void* reactor) {
#ifdef LAYERPROOF_RPC_REACTOR_TSAN
  __tsan_acquire(reactor);
#endif
}

template <typename Reactor>
void DeleteAfterLastCriticalSection(Reactor* reactor, absl::Mutex& call_mu) {
  ReactionStarts(reactor);  // OnDone is a reaction too
  { absl::MutexLock last(&call_mu); }
  delete reactor;
}

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_REACTOR_H_
