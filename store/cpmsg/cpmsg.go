// Package cpmsg splits checkpoints so that each message of a thread is
// stored once, shared by every checkpoint that holds it. The store
// implementations (store/sqlite, store/postgres) use it; nothing else
// should.
//
// A checkpoint row keeps the state without its messages (the small keys:
// title, todos, artifacts, ...) and a list of references to message rows,
// written as ranges of consecutive message ids ("[[first,count],...]").
// A step that appends k messages to a thread of n writes k message rows
// and a row whose message list is one or two ranges: its size does not
// depend on n. A [Plan] is the write of one checkpoint: it matches the
// state's messages against the parent checkpoint's by content and lists
// the new ones; [Assemble] rebuilds a state from a row and its message
// bodies. The [Cache] keeps the message ids and content hashes of each
// thread's newest checkpoint, so that writing the next one does not read
// the parent back.
package cpmsg

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// Hash identifies a message body (the first 16 bytes of its SHA-256).
type Hash [16]byte

// HashOf returns the hash of a message body.
func HashOf(body []byte) Hash {
	sum := sha256.Sum256(body)
	return Hash(sum[:16])
}

// Parent is what a write needs to know of the checkpoint it follows: its
// id and, for each of its messages in order, the message row and content
// hash; and what a read of it can reuse: its stored message list and,
// when kept, its decoded messages.
//
// A Parent is never modified once made, with one exception: the first
// write that extends all of its messages (Plan.Parent) may append to its
// slices in place, past their length, where no reader looks.
type Parent struct {
	CheckpointID string
	IDs          []int64
	Hashes       []Hash
	// Ranges is the checkpoint row's message list as stored (see
	// EncodeRanges); a cached read compares it with the row's.
	Ranges []byte
	// Messages are the checkpoint's messages, decoded from their rows;
	// nil when not kept. Readers get them capped at their length and
	// never write them.
	Messages []model.Message
	// Bytes is the size of the JSON bodies of Messages.
	Bytes int64
	// extended is set by the first Plan.Parent that appends to the
	// slices in place.
	extended atomic.Bool
}

// Ref is one message of a planned checkpoint: an existing message row
// (ID set, Body nil) or a new one (ID 0 until the store assigns it).
type Ref struct {
	ID   int64
	Body []byte
	Hash Hash
}

// Plan is the write of one checkpoint.
type Plan struct {
	// State is the state's JSON without its messages ("messages":null).
	State []byte
	// Kept is how many leading messages are the parent's first Kept
	// messages, reused without being encoded.
	Kept int
	// Refs are the state's messages after the first Kept, in order.
	Refs []Ref
	// New indexes the Refs whose message rows are to be written.
	New []int
	// Drops reports that the state lacks a message of its parent (a
	// summarization, a removal or an edit): the parent then holds
	// messages no later checkpoint has, and retention keeps it.
	Drops bool
	// parent is the Parent the plan was made after (nil for none).
	parent *Parent
}

// NewPlan encodes st for writing after parent (nil: no parent, or a
// parent whose message rows are unknown, and every message is new).
//
// kept is the writer's promise that the first kept messages of st are
// the parent's first kept messages, unchanged (the agent loop, which
// only appends between its checkpoints, knows it): they reuse the
// parent's rows without being encoded, so the write costs what the state
// added, not its history. A kept beyond either's length is ignored. Every
// other message is encoded, and reuses the row of a parent message with
// the same body.
func NewPlan(st *thread.State, parent *Parent, kept int) (*Plan, error) {
	if st == nil {
		st = &thread.State{}
	}
	rest := *st
	rest.Messages = nil
	state, err := json.Marshal(&rest)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	if parent == nil || kept < 0 || kept > len(parent.IDs) || kept > len(st.Messages) {
		kept = 0
	}
	tail := st.Messages[kept:]
	p := &Plan{State: state, Kept: kept, Refs: make([]Ref, len(tail)), parent: parent}
	var byHash map[Hash]int64
	if parent != nil && kept < len(parent.IDs) {
		byHash = make(map[Hash]int64, len(parent.IDs)-kept)
		for i := kept; i < len(parent.IDs); i++ {
			byHash[parent.Hashes[i]] = parent.IDs[i]
		}
	}
	used := make(map[int64]bool, len(byHash))
	for i := range tail {
		body, err := json.Marshal(&tail[i])
		if err != nil {
			return nil, fmt.Errorf("encode message %d: %w", kept+i, err)
		}
		h := HashOf(body)
		if id, ok := byHash[h]; ok {
			p.Refs[i] = Ref{ID: id, Hash: h}
			used[id] = true
			continue
		}
		p.Refs[i] = Ref{Body: body, Hash: h}
		p.New = append(p.New, i)
	}
	if parent != nil {
		for _, id := range parent.IDs[kept:] {
			if !used[id] {
				p.Drops = true
				break
			}
		}
	}
	return p, nil
}

// Ranges returns the message list of the row, once every new Ref has
// its ID: "[[first,count],...]" over runs of consecutive ids.
func (p *Plan) Ranges() ([]byte, error) {
	var prefix []int64
	if p.Kept > 0 {
		prefix = p.parent.IDs[:p.Kept]
	}
	tail := make([]int64, len(p.Refs))
	for i, r := range p.Refs {
		if r.ID <= 0 {
			return nil, fmt.Errorf("message %d has no row id", p.Kept+i)
		}
		tail[i] = r.ID
	}
	return encodeRanges(prefix, tail), nil
}

// Parent returns what the next write after this checkpoint (and a read
// of it) needs, once every new Ref has its ID; ranges is the row's
// message list (Ranges). It keeps the decoded messages when the plan
// extends all of a parent's kept messages: the new ones are decoded
// from their bodies (so that the Parent shares nothing with the
// caller's state), the parent's are shared. The first such Parent of a
// parent appends to the parent's slices in place; the others copy them.
func (p *Plan) Parent(checkpointID string, ranges []byte) *Parent {
	n := p.Kept + len(p.Refs)
	np := &Parent{CheckpointID: checkpointID, Ranges: ranges}
	whole := p.parent != nil && p.Kept == len(p.parent.IDs)
	own := whole && p.Kept > 0 && p.parent.extended.CompareAndSwap(false, true)
	if p.Kept > 0 {
		np.IDs = grow(p.parent.IDs[:p.Kept], own, n)
		np.Hashes = grow(p.parent.Hashes[:p.Kept], own, n)
	} else {
		np.IDs, np.Hashes = make([]int64, 0, room(n)), make([]Hash, 0, room(n))
	}
	for _, r := range p.Refs {
		np.IDs, np.Hashes = append(np.IDs, r.ID), append(np.Hashes, r.Hash)
	}
	if (!whole || p.parent.Messages == nil) && p.Kept > 0 {
		return np
	}
	// Every tail message is new here (nothing of the parent is left to
	// match), so each has its body.
	var msgs []model.Message
	var size int64
	if p.Kept > 0 {
		msgs, size = grow(p.parent.Messages[:p.Kept], own, n), p.parent.Bytes
	} else {
		msgs = make([]model.Message, 0, room(n))
	}
	for _, r := range p.Refs {
		var m model.Message
		if r.Body == nil || json.Unmarshal(r.Body, &m) != nil {
			return np // a reused row without its body: not kept
		}
		msgs, size = append(msgs, m), size+int64(len(r.Body))
	}
	np.Messages, np.Bytes = msgs, size
	return np
}

// grow returns s with room for n elements: s itself when owned (append
// then writes past its length, where the owner alone may), a copy
// otherwise.
func grow[T any](s []T, owned bool, n int) []T {
	if owned {
		return s
	}
	return append(make([]T, 0, room(n)), s...)
}

// room is the capacity given to n elements that later writes extend:
// a quarter more, and at least 16.
func room(n int) int {
	return n + max(n/4, 16)
}

// EncodeRanges writes ids as runs of consecutive ids.
func EncodeRanges(ids []int64) []byte {
	return encodeRanges(ids, nil)
}

// encodeRanges encodes the ids of a followed by those of b.
func encodeRanges(a, b []int64) []byte {
	at := func(i int) int64 {
		if i < len(a) {
			return a[i]
		}
		return b[i-len(a)]
	}
	n := len(a) + len(b)
	out := []byte{'['}
	for i := 0; i < n; {
		j := i + 1
		for j < n && at(j) == at(j-1)+1 {
			j++
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = strconv.AppendInt(out, at(i), 10)
		out = append(out, ',')
		out = strconv.AppendInt(out, int64(j-i), 10)
		out = append(out, ']')
		i = j
	}
	return append(out, ']')
}

// MaxMessages bounds the message references one row may expand to, so
// that a corrupt row cannot make a reader allocate without bound.
const MaxMessages = 1 << 20

// DecodeRanges reads a message list written by EncodeRanges.
func DecodeRanges(b []byte) ([]int64, error) {
	var rs [][2]int64
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("decode message list: %w", err)
	}
	var ids []int64
	for _, r := range rs {
		if r[0] <= 0 || r[1] <= 0 || int64(len(ids))+r[1] > MaxMessages {
			return nil, fmt.Errorf("decode message list: bad range [%d,%d]", r[0], r[1])
		}
		for k := range r[1] {
			ids = append(ids, r[0]+k)
		}
	}
	return ids, nil
}

// Span returns the smallest and largest id of ids (0, 0 for none).
func Span(ids []int64) (lo, hi int64) {
	if len(ids) == 0 {
		return 0, 0
	}
	return slices.Min(ids), slices.Max(ids)
}

// Assemble rebuilds a state from a row's state JSON, its message list
// (ranges, and the ids it holds) and the bodies of (at least) those
// messages. With parent it also returns the Parent that a write following
// this checkpoint, or a later read of it, uses (hashing every message and
// keeping the decoded messages, which the state shares: capped at their
// length, never to be written), nil otherwise.
func Assemble(checkpointID string, state, ranges []byte, ids []int64, bodies map[int64][]byte, parent bool) (*thread.State, *Parent, error) {
	var st thread.State
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, nil, fmt.Errorf("decode state of checkpoint %s: %w", checkpointID, err)
	}
	var p *Parent
	if parent {
		p = &Parent{CheckpointID: checkpointID, IDs: append(make([]int64, 0, room(len(ids))), ids...),
			Hashes: make([]Hash, len(ids), room(len(ids))), Ranges: ranges}
	}
	if len(ids) == 0 {
		if p != nil {
			p.Messages = []model.Message{}
		}
		return &st, p, nil
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, id := range ids {
		body, ok := bodies[id]
		if !ok {
			return nil, nil, fmt.Errorf("checkpoint %s: message row %d is missing", checkpointID, id)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(body)
		if p != nil {
			p.Hashes[i] = HashOf(body)
			p.Bytes += int64(len(body))
		}
	}
	buf.WriteByte(']')
	st.Messages = make([]model.Message, 0, room(len(ids)))
	if err := json.Unmarshal(buf.Bytes(), &st.Messages); err != nil {
		return nil, nil, fmt.Errorf("decode messages of checkpoint %s: %w", checkpointID, err)
	}
	if p != nil {
		p.Messages = st.Messages
		st.Messages = st.Messages[:len(ids):len(ids)]
	}
	return &st, p, nil
}

// Reuse rebuilds a state from a row's state JSON and the decoded messages
// of p, the Parent of the same checkpoint (Cache.Lookup), without reading
// a message row. The state shares p's messages, capped at their length:
// appending to them copies, writing them in place is not allowed.
func Reuse(state []byte, p *Parent) (*thread.State, error) {
	var st thread.State
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, fmt.Errorf("decode state of checkpoint %s: %w", p.CheckpointID, err)
	}
	if n := len(p.Messages); n > 0 {
		st.Messages = p.Messages[:n:n]
	}
	return &st, nil
}

// Intervals merges the message ids referenced by a thread's rows into
// sorted, disjoint [lo, hi] intervals: retention deletes the message rows
// of the thread between them.
func Intervals(lists [][]int64) [][2]int64 {
	var all []int64
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	var out [][2]int64
	for _, id := range all {
		if n := len(out); n > 0 && out[n-1][1]+1 == id {
			out[n-1][1] = id
			continue
		}
		out = append(out, [2]int64{id, id})
	}
	return out
}
