package memory

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/antlerhq/antler/model"
)

// hardQueueDepth is the queue's cap when queue_max_depth is 0
// (DeerFlow's "unlimited").
const hardQueueDepth = 10000

// item is one pending extraction: the latest conversation of a thread.
type item struct {
	userID, threadID string
	msgs             []model.Message
	due              time.Time
}

// queue is the debounced extraction queue (DeerFlow's MemoryUpdateQueue):
// a newer turn of the same thread replaces the pending one and restarts
// its wait; at most max items wait; one drain runs at a time.
type queue struct {
	m        *Manager
	debounce time.Duration
	max      int
	base     context.Context // the drains' context, cancelled by close
	cancel   context.CancelFunc

	mu     sync.Mutex // guards items, timer, closed
	items  []*item
	timer  *time.Timer
	closed bool

	run sync.Mutex // held by the drain in progress
}

func newQueue(m *Manager, debounce time.Duration, maxDepth int) *queue {
	if debounce <= 0 {
		debounce = 30 * time.Second
	}
	if maxDepth <= 0 || maxDepth > hardQueueDepth {
		maxDepth = hardQueueDepth
	}
	q := &queue{m: m, debounce: debounce, max: maxDepth}
	q.base, q.cancel = context.WithCancel(context.Background())
	return q
}

// add queues it and reports whether it was taken (not full, not closed).
func (q *queue) add(it *item) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = slices.DeleteFunc(q.items, func(o *item) bool { return o.userID == it.userID && o.threadID == it.threadID })
	if len(q.items) >= q.max {
		return false
	}
	q.items = append(q.items, it)
	if q.timer == nil {
		q.timer = time.AfterFunc(q.debounce, q.fire)
	} else {
		q.timer.Reset(q.debounce)
	}
	return true
}

// take removes and returns the items due at now (all of them if all).
func (q *queue) take(now time.Time, all bool) []*item {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out, rest []*item
	for _, it := range q.items {
		if all || !it.due.After(now) {
			out = append(out, it)
		} else {
			rest = append(rest, it)
		}
	}
	q.items = rest
	if len(rest) > 0 && !q.closed {
		wait := time.Until(rest[0].due)
		q.timer.Reset(max(wait, time.Millisecond))
	}
	return out
}

// pending counts the waiting items.
func (q *queue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// fire is the timer's drain of the due items.
func (q *queue) fire() {
	q.run.Lock()
	defer q.run.Unlock()
	for _, it := range q.take(time.Now(), false) {
		q.m.process(q.base, it)
	}
}

// flush drains every item now, until ctx ends; it returns ctx's error
// with the items left dropped.
func (q *queue) flush(ctx context.Context) error {
	q.run.Lock()
	defer q.run.Unlock()
	items := q.take(time.Now(), true)
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			q.m.logger.Warn("memory: pending extractions dropped", "count", len(items)-i, "err", err)
			return err
		}
		q.m.process(ctx, it)
	}
	return nil
}

// close stops the timer, refuses new items and drains the rest within
// ctx; a drain still running after ctx is cancelled.
func (q *queue) close(ctx context.Context) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.mu.Unlock()
	stop := context.AfterFunc(ctx, q.cancel) // a timer drain in flight ends with ctx
	defer stop()
	defer q.cancel()
	err := q.flush(ctx)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = nil
	}
	return err
}

// Enqueue schedules an extraction of a finished turn: after
// debounce_seconds without a newer turn of the same thread, the model
// reads the conversation and updates the user's document. It does
// nothing when memory is off, in tool mode, or without a model; a full
// queue drops the turn with a warning. msgs is copied.
func (m *Manager) Enqueue(userID, threadID string, msgs []model.Message) {
	if !m.Enabled() || m.cfg.Mode != "middleware" {
		return
	}
	if m.model == nil {
		m.logger.Debug("memory: no extraction model; turn not remembered", "user", userID, "thread", threadID)
		return
	}
	conv := conversation(msgs)
	if conv == nil {
		return
	}
	if !m.queue.add(&item{userID: userID, threadID: threadID, msgs: conv, due: time.Now().Add(m.queue.debounce)}) {
		m.logger.Warn("memory: extraction queue full or closed; turn not remembered", "user", userID, "thread", threadID,
			"queue_max_depth", m.queue.max)
	}
}

// Flush runs every pending extraction now (tests, `antler run`).
func (m *Manager) Flush(ctx context.Context) error { return m.queue.flush(ctx) }

// Pending counts the extractions waiting.
func (m *Manager) Pending() int { return m.queue.pending() }
