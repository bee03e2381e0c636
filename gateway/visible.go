package gateway

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
)

// The visible history of a summarised thread.
//
// A summarization replaces the state's messages by the kept tail, so the
// newest checkpoint no longer holds the turns the user saw. DeerFlow's
// messages page reads a separate, append-only message log and keeps
// listing them; Antler rebuilds the same list from the thread's
// checkpoints, which are all kept: the checkpoint before each
// summarization still holds the messages it removed.
const (
	// visiblePageSize is how many checkpoints one store read returns
	// while walking back.
	visiblePageSize = 64
	// maxVisibleScan bounds the checkpoints read for one rebuild; older
	// summarised-away turns are left out beyond it (and logged).
	maxVisibleScan = 5000
	// visibleCacheThreads bounds the rebuilt histories kept in memory.
	visibleCacheThreads = 32
)

// visibleCache keeps the last rebuilt history of a few threads, keyed by
// the checkpoint it was rebuilt at. Checkpoints are immutable and their
// ids unique, so an entry is never stale, on any replica; a newer
// checkpoint reuses it as the base of a shorter walk. The zero value is
// ready to use.
type visibleCache struct {
	mu      sync.Mutex                 // guards the fields below
	entries map[string]*visibleHistory // by thread id
	order   []string                   // thread ids, least recently used first
}

// visibleHistory is the visible history of a thread at one checkpoint.
type visibleHistory struct {
	checkpointID string
	messages     []model.Message // never modified once cached
}

func (c *visibleCache) get(threadID string) *visibleHistory {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.entries[threadID]
	if h != nil {
		c.touch(threadID)
	}
	return h
}

func (c *visibleCache) put(threadID string, h *visibleHistory) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*visibleHistory{}
	}
	if _, ok := c.entries[threadID]; !ok && len(c.entries) >= visibleCacheThreads {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[threadID] = h
	c.touch(threadID)
}

// touch moves threadID to the most recently used end; c.mu is held.
func (c *visibleCache) touch(threadID string) {
	for i, id := range c.order {
		if id == threadID {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, threadID)
}

// visibleMessages returns the chat history the frontend lists for a
// thread whose newest checkpoint is latest: its messages, with the
// messages every earlier summarization removed put back in their
// chronological places. A thread without a summary is its state. The
// state itself (what the model is sent) is not changed.
//
// The walk goes from newest to oldest checkpoint and stops at the first
// one without a summary (before the first summarization messages are
// only added, so it holds every older message) or at the checkpoint of a
// cached rebuild. A checkpoint contributes when it has a message its
// successor lacks, which is how a summarization shows (its summary_text
// may even repeat the previous one).
func (s *Server) visibleMessages(ctx context.Context, latest *store.Checkpoint) ([]model.Message, error) {
	if latest.State == nil {
		return nil, nil
	}
	msgs := latest.State.Messages
	if latest.State.SummaryText == "" {
		return msgs, nil
	}
	cached := s.visible.get(latest.ThreadID)
	if cached != nil && cached.checkpointID == latest.ID {
		return cached.messages, nil
	}
	newer, before, scanned := latest.State.Messages, latest.ID, 0
walk:
	for {
		cps, err := s.store.ListCheckpoints(ctx, latest.ThreadID, visiblePageSize, before)
		if err != nil {
			return nil, err
		}
		for _, cp := range cps {
			if cached != nil && cp.ID == cached.checkpointID {
				msgs = weave(msgs, cached.messages)
				break walk
			}
			if cp.State == nil {
				continue
			}
			if lacks(newer, cp.State.Messages) {
				msgs = weave(msgs, cp.State.Messages)
			}
			if cp.State.SummaryText == "" {
				break walk
			}
			newer = cp.State.Messages
			if scanned++; scanned >= maxVisibleScan {
				s.logger.Warn("visible history rebuilt from the newest checkpoints only", "thread_id", latest.ThreadID,
					"checkpoints", scanned)
				break walk
			}
		}
		if len(cps) < visiblePageSize {
			break
		}
		before = cps[len(cps)-1].ID
	}
	s.visible.put(latest.ThreadID, &visibleHistory{checkpointID: latest.ID, messages: msgs})
	return msgs, nil
}

// lacks reports whether newer misses a message of older: an id it does
// not have, or more copies of a message without an id than it has.
func lacks(newer, older []model.Message) bool {
	ids := make(map[string]bool, len(newer))
	var anon map[string]int
	for _, m := range newer {
		switch {
		case m.ID != "":
			ids[m.ID] = true
		case !m.Remove:
			if anon == nil {
				anon = map[string]int{}
			}
			anon[contentKey(m)]++
		}
	}
	for _, m := range older {
		switch {
		case m.Remove:
		case m.ID != "":
			if !ids[m.ID] {
				return true
			}
		default:
			k := contentKey(m)
			if anon[k] == 0 {
				return true
			}
			anon[k]--
		}
	}
	return false
}

// weave returns newer with the messages of older that it lacks put back
// where older had them: each missing message goes before the next message
// the two share (after the last shared one when none follows, before
// everything when they share none). Messages are matched by id; messages
// without an id by their whole content, matching from the end (a
// summarization keeps a tail), so that an identical later copy is not
// taken for a removed one. newer is returned as is when nothing is
// missing; neither argument is modified.
func weave(newer, older []model.Message) []model.Message {
	byID := make(map[string]int, len(newer))
	anon := map[string][]int{} // content key → indexes in newer of messages without an id
	for i, m := range newer {
		if m.ID != "" {
			byID[m.ID] = i
		} else {
			k := contentKey(m)
			anon[k] = append(anon[k], i)
		}
	}
	anchor := make([]int, len(older)) // index in newer, or -1
	missing := false
	for i := len(older) - 1; i >= 0; i-- {
		m := older[i]
		anchor[i] = -1
		switch {
		case m.Remove:
		case m.ID != "":
			if j, ok := byID[m.ID]; ok {
				anchor[i] = j
			} else {
				missing = true
			}
		default:
			k := contentKey(m)
			if js := anon[k]; len(js) > 0 {
				anchor[i], anon[k] = js[len(js)-1], js[:len(js)-1]
			} else {
				missing = true
			}
		}
	}
	if !missing {
		return newer
	}
	before := map[int][]model.Message{}
	var pending []model.Message
	last, n := -1, len(newer)
	for i, m := range older {
		switch {
		case anchor[i] >= 0:
			before[anchor[i]] = append(before[anchor[i]], pending...)
			pending, last = nil, anchor[i]
		case !m.Remove:
			pending = append(pending, m)
			n++
		}
	}
	out := make([]model.Message, 0, n)
	if last < 0 {
		out, pending = append(out, pending...), nil
	}
	for j, m := range newer {
		out = append(out, before[j]...)
		out = append(out, m)
		if j == last {
			out = append(out, pending...)
		}
	}
	return out
}

// contentKey identifies a message without an id by its whole content.
func contentKey(m model.Message) string {
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return string(b)
}
