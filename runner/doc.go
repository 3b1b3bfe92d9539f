package runner

// Past one machine
//
// The runner keeps two things behind narrow seams so that operators who
// outgrow one process can replace bbolt without touching a front end:
//
//   - The waiting runs (queue.go: push, drop, pending, and the Begin that
//     takes a run off the queue inside the commit recording its start). On
//     NATS JetStream this is one work-queue stream with a subject per
//     conversation (runs.<conv>), MaxMsgsPerSubject as the per-conversation
//     cap and MaxMsgs as the global one; a consumer per conversation with
//     MaxAckPending 1 keeps one run at a time, and Begin becomes the ack,
//     written to an outbox row in the same PostgreSQL transaction that
//     records the run's start and relayed after commit (so a crash between
//     the two still runs the message exactly once).
//   - The journal (journal.go: add, close, read from a sequence). On
//     JetStream it is a stream per run (or a subject runs.<id>.events with
//     a max age), which is what lets a follower on another node re-join
//     from a sequence number; the in-memory journal is its single-node
//     form.
//
// Threads, messages and run records would move to PostgreSQL behind the
// store's accessors; recovery stays one pass, run by whichever node takes
// a conversation's consumer. None of this is built: bbolt is the only
// engine today.
