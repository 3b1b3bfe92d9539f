// Package schema is the layout of deerflow's bbolt file: its buckets, the
// migrations that create them, and the encodings of their keys. It is
// shared by package store, which reads and writes the file, and
// store/doctor, which checks and salvages it; nothing else may import it.
//
// It imports no package of ours.
package schema

import (
	"encoding/binary"

	"go.etcd.io/bbolt"
)

// Bucket names. Each is created by a migration; an accessor never creates
// one.
var (
	Meta     = []byte("meta")
	Chats    = []byte("chats")     // chatKey → threadID
	BotMsgs  = []byte("botmsgs")   // BotMsgKey(channel, chat, message) → chatKey
	Threads  = []byte("threads")   // threadID → Thread JSON
	Messages = []byte("messages")  // MsgKey(threadID, seq) → message, package codec
	Seqs     = []byte("seqs")      // threadID → SeqState
	Runs     = []byte("runs")      // runID → Run JSON
	RunIndex = []byte("runstatus") // RunIndexKey(status, runID) → empty

	Inbound = []byte("inbound") // BE64(seq) → an inbound message, encoded by the bus
	Dedup   = []byte("dedup")   // key → BE64(unix seconds first seen)
	Outbox  = []byte("outbox")  // BE64(seq) → an outbound message, encoded by the bus
	// Memory holds, per scope (a person "telegram:1001", or a chat
	// "chat:telegram:-100200"): MemoryKey(scope) → Memory JSON, and
	// PendingPrefix(scope) runID → Exchange JSON, waiting for the updater.
	Memory = []byte("memory")
	Skills = []byte("skills") // skill name → SkillState JSON
	Tasks  = []byte("tasks")  // TaskKey(runID, taskID) → Task JSON

	State    = []byte("state")    // key → value: small per-channel state such as a poll offset
	Research = []byte("research") // threadID → Research JSON
	// APIQueue holds the HTTP API's runs that are accepted but not yet
	// started: BE64(seq) → a run, encoded by the api package. A run
	// leaves it in the transaction that starts it, so after a restart each
	// one either runs then or is known to have started.
	APIQueue = []byte("apiqueue")

	// Reserved buckets were created empty by the first migration, so
	// that the features using them needed no migration just to exist.
	Reserved = [][]byte{Inbound, Dedup, Outbox, Memory, Skills, Tasks}

	KeySchemaVersion = []byte("schema_version") // in Meta: BE64(version)
)

// Buckets returns the top-level buckets of the current schema.
func Buckets() [][]byte {
	names := [][]byte{Meta, Chats, BotMsgs, Threads, Messages, Seqs, Runs,
		RunIndex, State, Research, APIQueue}
	return append(names, Reserved...)
}

// A Migration brings the database from version i to i+1, where i is its
// index in Migrations. Append new ones; never edit or reorder old ones.
type Migration func(*bbolt.Tx) error

// Migrations are the schema's migrations, in order.
var Migrations = []Migration{
	migrateTo1,
	createBucket(State),
	createBucket(Research),
	createBucket(APIQueue),
}

// Version is the schema version this build writes.
func Version() int { return len(Migrations) }

// migrateTo1 creates the first set of buckets.
func migrateTo1(tx *bbolt.Tx) error {
	names := [][]byte{Chats, BotMsgs, Threads, Messages, Seqs, Runs, RunIndex}
	for _, name := range append(names, Reserved...) {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// createBucket is a migration that adds one bucket.
func createBucket(name []byte) Migration {
	return func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(name)
		return err
	}
}

// MsgKey is a message's key: threadID 0x00 bigEndian(seq). Byte order is
// thread, then seq order, and a thread's keys are contiguous. Thread ids
// hold no NUL.
func MsgKey(threadID string, seq uint64) []byte {
	k := make([]byte, 0, len(threadID)+9)
	k = append(k, threadID...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// MsgPrefix is the prefix of thread threadID's message keys.
func MsgPrefix(threadID string) []byte { return MsgKey(threadID, 0)[:len(threadID)+1] }

// MsgSeq returns the seq of key k if k belongs to the thread with prefix p.
func MsgSeq(p, k []byte) (uint64, bool) {
	if len(k) != len(p)+8 || string(k[:len(p)]) != string(p) {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(p):]), true
}

// SeqState is a thread's record in the seqs bucket: the last seq assigned
// and the number of messages stored, 8 bytes big-endian each.
type SeqState struct{ Last, Count uint64 }

// GetSeqState reads thread threadID's record from the seqs bucket b.
func GetSeqState(b *bbolt.Bucket, threadID string) SeqState {
	v := b.Get([]byte(threadID))
	if len(v) != 16 {
		return SeqState{}
	}
	return SeqState{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])}
}

// PutSeqState writes thread threadID's record to the seqs bucket b.
func PutSeqState(b *bbolt.Bucket, threadID string, s SeqState) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), s.Last)
	return b.Put([]byte(threadID), binary.BigEndian.AppendUint64(v, s.Count))
}

// BotMsgKey length-prefixes channel and chat so that no id, whatever bytes
// it holds, can make two keys collide, and a chat's keys stay contiguous.
func BotMsgKey(channel, chatID, messageID string) []byte {
	k := make([]byte, 0, 2*binary.MaxVarintLen64+len(channel)+len(chatID)+len(messageID))
	k = binary.AppendUvarint(k, uint64(len(channel)))
	k = append(k, channel...)
	k = binary.AppendUvarint(k, uint64(len(chatID)))
	k = append(k, chatID...)
	return append(k, messageID...)
}

// RunIndexKey is status 0x00 runID. Statuses hold no NUL.
func RunIndexKey(status, runID string) []byte { return joinKey(status, runID) }

// TaskKey is runID 0x00 taskID.
func TaskKey(runID, taskID string) []byte { return joinKey(runID, taskID) }

func joinKey(a, b string) []byte {
	k := make([]byte, 0, len(a)+1+len(b))
	k = append(k, a...)
	k = append(k, 0)
	return append(k, b...)
}

// MemoryKey is "m" 0x00 scope.
func MemoryKey(scope string) []byte { return append([]byte("m\x00"), scope...) }

// PendingPrefix is "p" 0x00 scope 0x00, the prefix of a scope's waiting
// exchanges (each key ends with its run id).
func PendingPrefix(scope string) []byte {
	k := append([]byte("p\x00"), scope...)
	return append(k, 0)
}

// BE64 is v as 8 bytes big-endian: a queue bucket's key, a dedup time.
func BE64(v uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v) }

// HasPrefix reports whether key k begins with p.
func HasPrefix(k, p []byte) bool {
	return len(k) >= len(p) && string(k[:len(p)]) == string(p)
}
