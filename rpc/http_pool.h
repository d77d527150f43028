// The task queue every cpp-httplib server of LayerProof runs on (the
// prover's HTTP API, the nodes' /metrics): `threads` handlers and at most
// `max_queued` accepted connections waiting for one. cpp-httplib's own pool
// queues without bound; with this one the accept loop waits once the queue
// is full, so the kernel's listen backlog is the only queue beyond it.
// Thread safety: as httplib::TaskQueue.
#ifndef LAYERPROOF_RPC_HTTP_POOL_H_
#define LAYERPROOF_RPC_HTTP_POOL_H_

#include <httplib.h>

#include <cstddef>

namespace layerproof::rpc {

// For httplib::Server::new_task_queue; the server owns what it returns.
httplib::TaskQueue* NewBoundedHttpPool(int threads, size_t max_queued);

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_HTTP_POOL_H_
