package postgres

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Notification channels (database-wide; payloads are run ids, unique
// across schemas, so a shared database only costs spurious wake-ups).
const (
	eventsChannel = "antler_run_events"
	cancelChannel = "antler_run_cancel"
)

// Defaults of EventsOptions.
const (
	DefaultEventRetention = time.Hour
	DefaultEventPoll      = time.Second
)

// EventsOptions configure NewEvents. The zero value is ready to use.
type EventsOptions struct {
	// Retention is how long the frames of an ended run are kept after it
	// ended; 0 means DefaultEventRetention.
	Retention time.Duration
	// OnCancel is called (on the listener goroutine) when any replica
	// asks for a run to be cancelled (RequestCancel); nil ignores.
	OnCancel func(runID string)
	// Listen adds notification channels to the listener, with the
	// function called (on the listener goroutine) for each notification;
	// nil handlers are ignored. After every (re)connection each handler
	// is called with payload "" (notifications may have been missed).
	Listen map[string]func(payload string)
	// MaxConns caps the relay's own connection pool (appends and
	// follower reads; the listener has one more connection); 0 means 4.
	MaxConns int32
	// Logger receives listener failures; nil discards.
	Logger *slog.Logger
}

// Frame is one stored stream frame of a run; Seq counts from 1.
type Frame struct {
	Seq  int
	Data []byte
}

// Events stores the stream frames of runs so that a client can follow a
// run from any replica: the replica running it appends frames in batches
// (Append), and every append is announced with NOTIFY on a channel that
// one dedicated connection per replica LISTENs to; followers wake up
// (Watch) and read what they have not seen (Read). A notification lost
// while the listener reconnects only delays a follower until its next
// poll (callers poll every DefaultEventPoll as a fallback).
//
// Frames are relay data, not state: Events uses its own small pool, apart
// from the store's (a burst of frames never delays a checkpoint), whose
// sessions commit asynchronously (synchronous_commit off: a database
// crash may lose the last fraction of a second of frames, never
// corrupt them).
//
// Events is safe for concurrent use. Close stops its goroutines.
type Events struct {
	// immutable after NewEvents
	pool      *pgxpool.Pool // Events' own
	connCfg   *pgx.ConnConfig
	retention time.Duration
	onCancel  func(runID string)
	handlers  map[string]func(payload string)
	logger    *slog.Logger
	stop      context.CancelFunc
	wg        sync.WaitGroup

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{} // guarded by mu: run id → wake channels
}

// NewEvents opens the relay's pool on s's database and starts the
// listener and the retention cleaner.
func NewEvents(s *Store, o EventsOptions) (*Events, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := s.pool.Config()
	cfg.MaxConns = cmp.Or(o.MaxConns, 4)
	cfg.MinConns = 0
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: run events pool: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	e := &Events{pool: pool, connCfg: s.pool.Config().ConnConfig, retention: cmp.Or(o.Retention, DefaultEventRetention),
		onCancel: o.OnCancel, handlers: o.Listen, logger: logger, stop: stop, subs: map[string]map[chan struct{}]struct{}{}}
	e.wg.Add(2)
	go e.listen(ctx)
	go e.clean(ctx)
	return e, nil
}

// Close stops the listener and the cleaner and closes the pool.
func (e *Events) Close() error {
	e.stop()
	e.wg.Wait()
	e.pool.Close()
	return nil
}

// Appended is a run's frames first, first+1, ... for AppendMany.
type Appended struct {
	ThreadID, RunID string
	First           int
	Frames          [][]byte
}

// Append stores frames as the frames first, first+1, ... of a run and
// announces them. Frames already stored (same run and seq) are kept.
func (e *Events) Append(ctx context.Context, threadID, runID string, first int, frames [][]byte) error {
	return e.AppendMany(ctx, []Appended{{ThreadID: threadID, RunID: runID, First: first, Frames: frames}})
}

// AppendMany stores the frames of several runs in one statement and
// announces each run once (one round trip for a whole batch).
func (e *Events) AppendMany(ctx context.Context, batch []Appended) error {
	var runs, threads []string
	var seqs []int32
	var frames [][]byte
	var notify []string
	for _, b := range batch {
		if len(b.Frames) == 0 {
			continue
		}
		for i, f := range b.Frames {
			runs, threads = append(runs, b.RunID), append(threads, b.ThreadID)
			seqs, frames = append(seqs, int32(b.First+i)), append(frames, f)
		}
		if len(notify) == 0 || notify[len(notify)-1] != b.RunID {
			notify = append(notify, b.RunID)
		}
	}
	if len(frames) == 0 {
		return nil
	}
	_, err := e.pool.Exec(ctx, `WITH ins AS (
		INSERT INTO antler_run_events (run_id, thread_id, seq, frame)
		SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bytea[])
		ON CONFLICT (run_id, seq) DO NOTHING)
		SELECT pg_notify($5, r) FROM (SELECT DISTINCT unnest($6::text[]) AS r) AS n`,
		runs, threads, seqs, frames, eventsChannel, notify)
	if err != nil {
		return fmt.Errorf("postgres: append run events: %w", err)
	}
	return nil
}

// Read returns the stored frames of a run after seq `after`, in order, at
// most limit of them (0: all).
func (e *Events) Read(ctx context.Context, runID string, after, limit int) ([]Frame, error) {
	q := `SELECT seq, frame FROM antler_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`
	args := []any{runID, after}
	if limit > 0 {
		q += ` LIMIT $3`
		args = append(args, limit)
	}
	rows, err := e.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read run events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Frame, error) {
		var f Frame
		err := r.Scan(&f.Seq, &f.Data)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read run events: %w", err)
	}
	return out, nil
}

// Watch returns a channel that receives a value after frames of runID
// are appended (by any replica), and the function that stops watching.
// Wake-ups coalesce: one value may stand for several appends.
func (e *Events) Watch(runID string) (wake <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	e.mu.Lock()
	if e.subs[runID] == nil {
		e.subs[runID] = map[chan struct{}]struct{}{}
	}
	e.subs[runID][ch] = struct{}{}
	e.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			e.mu.Lock()
			delete(e.subs[runID], ch)
			if len(e.subs[runID]) == 0 {
				delete(e.subs, runID)
			}
			e.mu.Unlock()
		})
	}
}

// RequestCancel asks every replica to cancel runID; the one running it
// gets EventsOptions.OnCancel.
func (e *Events) RequestCancel(ctx context.Context, runID string) error {
	if _, err := e.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, cancelChannel, runID); err != nil {
		return fmt.Errorf("postgres: request cancel: %w", err)
	}
	return nil
}

// wake signals the watchers of runID ("" wakes every watcher).
func (e *Events) wake(runID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	signal := func(set map[chan struct{}]struct{}) {
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	if runID == "" {
		for _, set := range e.subs {
			signal(set)
		}
		return
	}
	signal(e.subs[runID])
}

// listen holds one dedicated connection that LISTENs to both channels,
// reconnecting with backoff. After each (re)connection every watcher is
// woken, since notifications may have been missed.
func (e *Events) listen(ctx context.Context) {
	defer e.wg.Done()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := e.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		e.logger.Warn("run events listener disconnected; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (e *Events) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, e.connCfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	channels := []string{eventsChannel, cancelChannel}
	for ch := range e.handlers {
		channels = append(channels, ch)
	}
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	e.wake("")
	for _, f := range e.handlers {
		if f != nil {
			f("")
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case eventsChannel:
			e.wake(n.Payload)
		case cancelChannel:
			if e.onCancel != nil {
				e.onCancel(n.Payload)
			}
		default:
			if f := e.handlers[n.Channel]; f != nil {
				f(n.Payload)
			}
		}
	}
}

// clean deletes the frames of runs that ended more than the retention
// ago, and frames without a run row older than the retention.
func (e *Events) clean(ctx context.Context) {
	defer e.wg.Done()
	every := max(min(e.retention/2, 10*time.Minute), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.Clean(ctx); err != nil && ctx.Err() == nil {
				e.logger.Error("run events cleanup failed", "err", err)
			}
		}
	}
}

// Clean deletes expired frames now and returns how many.
func (e *Events) Clean(ctx context.Context) (int64, error) {
	tag, err := e.pool.Exec(ctx, `DELETE FROM antler_run_events ev
		WHERE ev.created_at < now() - $1 * interval '1 millisecond'
		  AND NOT EXISTS (SELECT 1 FROM antler_runs r WHERE r.id = ev.run_id
		      AND (r.status IN ('pending', 'running') OR r.updated_at >= now() - $1 * interval '1 millisecond'))`,
		e.retention.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("postgres: clean run events: %w", err)
	}
	return tag.RowsAffected(), nil
}
