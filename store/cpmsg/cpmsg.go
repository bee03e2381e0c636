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
// id and, for each of its messages in order, the message row and content.
type Parent struct {
	CheckpointID string
	IDs          []int64
	Hashes       []Hash
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
	// Refs are the state's messages in order.
	Refs []Ref
	// New indexes the Refs whose message rows are to be written.
	New []int
	// Drops reports that the state lacks a message of its parent (a
	// summarization, a removal or an edit): the parent then holds
	// messages no later checkpoint has, and retention keeps it.
	Drops bool
}

// NewPlan encodes st for writing after parent (nil: no parent, or a
// parent whose message rows are unknown, and every message is new). A
// message whose body equals one of the parent's reuses its row.
func NewPlan(st *thread.State, parent *Parent) (*Plan, error) {
	if st == nil {
		st = &thread.State{}
	}
	rest := *st
	rest.Messages = nil
	state, err := json.Marshal(&rest)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	p := &Plan{State: state, Refs: make([]Ref, len(st.Messages))}
	var byHash map[Hash]int64
	if parent != nil {
		byHash = make(map[Hash]int64, len(parent.Hashes))
		for i, h := range parent.Hashes {
			byHash[h] = parent.IDs[i]
		}
	}
	used := make(map[int64]bool, len(st.Messages))
	for i := range st.Messages {
		body, err := json.Marshal(&st.Messages[i])
		if err != nil {
			return nil, fmt.Errorf("encode message %d: %w", i, err)
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
		for _, id := range parent.IDs {
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
	ids := make([]int64, len(p.Refs))
	for i, r := range p.Refs {
		if r.ID <= 0 {
			return nil, fmt.Errorf("message %d has no row id", i)
		}
		ids[i] = r.ID
	}
	return EncodeRanges(ids), nil
}

// Parent returns what the next write after this checkpoint needs, once
// every new Ref has its ID.
func (p *Plan) Parent(checkpointID string) *Parent {
	np := &Parent{CheckpointID: checkpointID, IDs: make([]int64, len(p.Refs)), Hashes: make([]Hash, len(p.Refs))}
	for i, r := range p.Refs {
		np.IDs[i], np.Hashes[i] = r.ID, r.Hash
	}
	return np
}

// EncodeRanges writes ids as runs of consecutive ids.
func EncodeRanges(ids []int64) []byte {
	b := []byte{'['}
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, ids[i], 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j-i), 10)
		b = append(b, ']')
		i = j
	}
	return append(b, ']')
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

// Assemble rebuilds a state from a row's state JSON, its message ids and
// the bodies of (at least) those messages. With parent it also returns
// the Parent that a write following this checkpoint uses (hashing every
// message), nil otherwise.
func Assemble(checkpointID string, state []byte, ids []int64, bodies map[int64][]byte, parent bool) (*thread.State, *Parent, error) {
	var st thread.State
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, nil, fmt.Errorf("decode state of checkpoint %s: %w", checkpointID, err)
	}
	var p *Parent
	if parent {
		p = &Parent{CheckpointID: checkpointID, IDs: ids, Hashes: make([]Hash, len(ids))}
	}
	if len(ids) == 0 {
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
		}
	}
	buf.WriteByte(']')
	st.Messages = make([]model.Message, 0, len(ids))
	if err := json.Unmarshal(buf.Bytes(), &st.Messages); err != nil {
		return nil, nil, fmt.Errorf("decode messages of checkpoint %s: %w", checkpointID, err)
	}
	return &st, p, nil
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
