package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/antlerhq/antler/store"
)

// Defaults of LeaseOptions.
const (
	DefaultLeaseTTL = 30 * time.Second
)

// ErrLeaseHeld is returned by Leases.Acquire when another run holds an
// unexpired lease on the thread.
var ErrLeaseHeld = errors.New("postgres: the thread has an active run")

// lostLeaseError is the error text of a run failed because its replica
// stopped renewing its lease.
const lostLeaseError = "the replica running this run stopped (its run lease expired)"

// orphanedRunError is the error text of a run failed by the sweep because
// it was still recorded as running after its replica had let its lease
// go: the run ended without its outcome being written.
const orphanedRunError = "the run stopped without recording its outcome (it has no live run lease)"

// LeaseOptions configure NewLeases. The zero value is ready to use.
type LeaseOptions struct {
	// Owner names this replica in lease rows (for operators); "" means
	// host:pid:random.
	Owner string
	// TTL is how long a lease lives without a heartbeat: how long after
	// a replica dies its runs are failed and their threads usable again.
	// 0 means DefaultLeaseTTL.
	TTL time.Duration
	// Heartbeat is the renewal interval of held leases, and the time a
	// renewal (its retries included) may take; 0 means TTL/3.
	Heartbeat time.Duration
	// SweepInterval is how often expired leases are swept (their runs
	// failed), and the time a sweep may take; 0 means TTL/2.
	SweepInterval time.Duration
	// OnLost is called (on the heartbeat goroutine) for a held lease that
	// could not be renewed because it expired and was swept or taken: the
	// caller should stop the run, whose checkpoints are now refused
	// (ErrLeaseLost). nil ignores.
	OnLost func(threadID, runID string)
	// Logger receives heartbeat and sweep failures; nil discards.
	Logger *slog.Logger
}

// Leases grants one run per thread across every replica sharing the
// database. A lease is a row (thread, run, owner, expires_at) that the
// holder renews on a heartbeat; expiry is judged by the database clock,
// so replicas' clocks do not matter. Another replica takes an expired
// lease over: its run is marked failed (status error) and the thread's
// busy status cleared, by a periodic sweep or by the next Acquire on the
// thread, whichever comes first. Checkpoints of a run that lost its lease
// are refused by Store.PutCheckpoint (fencing), so the new holder is the
// only writer.
//
// The guarantee: a run recorded with CreateRunOwned is never left pending
// or running without a live lease for longer than the TTL plus a sweep
// interval: a run whose replica died is failed when its lease expires,
// and one whose replica let the lease go without recording the outcome
// (the database connection was lost) at the next sweep.
//
// Leases is safe for concurrent use. Close stops its goroutine.
type Leases struct {
	// immutable after NewLeases
	pool   *pgxpool.Pool
	retry  retrier
	owner  string
	ttl    time.Duration
	onLost func(threadID, runID string)
	logger *slog.Logger
	stop   context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	held map[string]string // guarded by mu: thread id → run id
}

// NewLeases returns the leases of s and starts their heartbeat and sweep
// goroutine.
func NewLeases(s *Store, o LeaseOptions) *Leases {
	o.TTL = cmp.Or(o.TTL, DefaultLeaseTTL)
	o.Heartbeat = cmp.Or(o.Heartbeat, o.TTL/3)
	o.SweepInterval = cmp.Or(o.SweepInterval, o.TTL/2)
	if o.Owner == "" {
		o.Owner = store.NewOwnerID()
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	retry := s.retry
	retry.logger = logger
	l := &Leases{pool: s.pool, retry: retry, owner: o.Owner, ttl: o.TTL, onLost: o.OnLost, logger: logger,
		stop: stop, done: make(chan struct{}), held: map[string]string{}}
	go l.loop(ctx, o.Heartbeat, o.SweepInterval)
	return l
}

// Owner returns the name this replica writes in lease rows.
func (l *Leases) Owner() string { return l.owner }

// TTL returns the lease duration.
func (l *Leases) TTL() time.Duration { return l.ttl }

// Close stops the heartbeat and the sweeper. Leases still held then expire
// after the TTL.
func (l *Leases) Close() error {
	l.stop()
	<-l.done
	return nil
}

// failRun marks an abandoned run failed and its thread no longer busy.
const failRun = `WITH r AS (
	UPDATE antler_runs SET status = 'error', stop_reason = 'error', error = $3, updated_at = now()
	WHERE id = $2 AND status IN ('pending', 'running') RETURNING 1)
UPDATE antler_threads SET status = 'error', updated_at = now() WHERE id = $1 AND status = 'busy'`

// Acquire claims threadID for runID, taking over an expired lease (and
// failing its run). It returns ErrLeaseHeld when another run holds an
// unexpired lease, and store.ErrNotFound for a missing thread. release
// gives the lease back; it is safe to call more than once.
func (l *Leases) Acquire(ctx context.Context, threadID, runID string) (release func(), err error) {
	err = l.retry.do(ctx, "acquire lease", func(ctx context.Context, _ int) error { return l.acquire(ctx, threadID, runID) })
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.held[threadID] = runID
	l.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { l.release(threadID, runID) }) }, nil
}

// acquire is one attempt of Acquire: one transaction. Finding the lease
// already held by runID means an earlier attempt committed before its
// connection died; the lease is renewed and kept.
func (l *Leases) acquire(ctx context.Context, threadID, runID string) error {
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("postgres: acquire lease: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var holder string
	var expired bool
	err = tx.QueryRow(ctx, `SELECT run_id, expires_at < now() FROM antler_run_leases WHERE thread_id = $1 FOR UPDATE`,
		threadID).Scan(&holder, &expired)
	switch {
	case isNoRows(err):
		tag, err := tx.Exec(ctx, `INSERT INTO antler_run_leases (thread_id, run_id, owner, acquired_at, expires_at)
			VALUES ($1, $2, $3, now(), now() + $4 * interval '1 millisecond') ON CONFLICT (thread_id) DO NOTHING`,
			threadID, runID, l.owner, l.ttl.Milliseconds())
		if pgCode(err) == foreignKeyViolation {
			return fmt.Errorf("thread %q: %w", threadID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: acquire lease: %w", err)
		}
		if tag.RowsAffected() == 0 { // inserted by another replica meanwhile
			return fmt.Errorf("thread %q: %w", threadID, ErrLeaseHeld)
		}
	case err != nil:
		return fmt.Errorf("postgres: acquire lease: %w", err)
	case holder == runID:
		if _, err := tx.Exec(ctx, `UPDATE antler_run_leases SET owner = $2, expires_at = now() + $3 * interval '1 millisecond'
			WHERE thread_id = $1`, threadID, l.owner, l.ttl.Milliseconds()); err != nil {
			return fmt.Errorf("postgres: acquire lease: %w", err)
		}
	case !expired:
		return fmt.Errorf("thread %q (run %s): %w", threadID, holder, ErrLeaseHeld)
	default:
		if _, err := tx.Exec(ctx, failRun, threadID, holder, lostLeaseError); err != nil {
			return fmt.Errorf("postgres: fail abandoned run %s: %w", holder, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE antler_run_leases SET run_id = $2, owner = $3, acquired_at = now(),
			expires_at = now() + $4 * interval '1 millisecond' WHERE thread_id = $1`,
			threadID, runID, l.owner, l.ttl.Milliseconds()); err != nil {
			return fmt.Errorf("postgres: acquire lease: %w", err)
		}
		l.logger.Warn("took over an expired run lease; its run is failed", "thread_id", threadID, "run_id", holder)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: acquire lease: %w", err)
	}
	return nil
}

func (l *Leases) release(threadID, runID string) {
	l.mu.Lock()
	if l.held[threadID] == runID {
		delete(l.held, threadID)
	}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := l.retry.do(ctx, "release lease", func(ctx context.Context, _ int) error {
		_, err := l.pool.Exec(ctx, `DELETE FROM antler_run_leases WHERE thread_id = $1 AND run_id = $2`, threadID, runID)
		return err
	})
	if err != nil {
		l.logger.Error("cannot release a run lease; it expires on its own", "thread_id", threadID, "run_id", runID, "err", err)
	}
}

// Lease describes a held lease.
type Lease struct {
	ThreadID, RunID, Owner string
	AcquiredAt, ExpiresAt  time.Time
}

// Get returns the lease on threadID; ok is false when there is none (an
// expired lease not yet swept is returned).
func (l *Leases) Get(ctx context.Context, threadID string) (lease Lease, ok bool, err error) {
	err = l.retry.do(ctx, "get lease", func(ctx context.Context, _ int) error {
		return l.pool.QueryRow(ctx, `SELECT thread_id, run_id, owner, acquired_at, expires_at FROM antler_run_leases WHERE thread_id = $1`,
			threadID).Scan(&lease.ThreadID, &lease.RunID, &lease.Owner, &lease.AcquiredAt, &lease.ExpiresAt)
	})
	if isNoRows(err) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("postgres: get lease: %w", err)
	}
	return lease, true, nil
}

// sweep, in one statement (one snapshot: a lease renewed or a run
// recorded after it started is seen by the next sweep):
//
//   - deletes every expired lease and fails its run (lostLeaseError);
//   - fails every run owned by a replica (runs.owner set) that is pending
//     or running without a live lease of its own (orphanedRunError: its
//     replica let the lease go without recording the outcome, for one
//     because the database connection was lost), even when its thread
//     has since been leased to a new run;
//   - frees the threads that are busy without a live lease: those of the
//     runs above become error; one whose latest run is owned and ended
//     (its replica recorded the outcome but not the thread's status)
//     takes the status that outcome gives (error, interrupted, else
//     idle). A thread whose latest run has no owner (a CLI run) is left
//     alone.
const sweep = `WITH dead AS (
	DELETE FROM antler_run_leases WHERE expires_at < now() RETURNING thread_id, run_id),
orphans AS (
	SELECT r.id FROM antler_runs r
	WHERE r.status IN ('pending', 'running') AND r.owner <> ''
	  AND NOT EXISTS (SELECT 1 FROM antler_run_leases l WHERE l.run_id = r.id AND l.expires_at >= now())),
failed AS (
	UPDATE antler_runs SET status = 'error', stop_reason = 'error', updated_at = now(),
		error = CASE WHEN antler_runs.id IN (SELECT run_id FROM dead) THEN $1 ELSE $2 END
	WHERE antler_runs.status IN ('pending', 'running')
	  AND (antler_runs.id IN (SELECT run_id FROM dead) OR antler_runs.id IN (SELECT id FROM orphans))
	RETURNING antler_runs.thread_id, antler_runs.id),
freed AS (
	SELECT t.id, CASE
		WHEN t.id IN (SELECT thread_id FROM dead) OR t.id IN (SELECT thread_id FROM failed) THEN 'error'
		WHEN r.status = 'error' THEN 'error'
		WHEN r.status = 'interrupted' THEN 'interrupted'
		ELSE 'idle' END AS status
	FROM antler_threads t
	LEFT JOIN LATERAL (SELECT status, owner FROM antler_runs WHERE thread_id = t.id
		ORDER BY created_at DESC, seq DESC LIMIT 1) r ON true
	WHERE t.status = 'busy'
	  AND NOT EXISTS (SELECT 1 FROM antler_run_leases l WHERE l.thread_id = t.id AND l.expires_at >= now())
	  AND (t.id IN (SELECT thread_id FROM dead) OR t.id IN (SELECT thread_id FROM failed)
		OR (r.owner <> '' AND r.status NOT IN ('pending', 'running')))),
t AS (
	UPDATE antler_threads SET status = freed.status, updated_at = now()
	FROM freed WHERE antler_threads.id = freed.id
	RETURNING 1)
SELECT thread_id, run_id FROM dead UNION SELECT thread_id, id FROM failed`

// Sweep fails the runs of every expired lease, and the owned runs left
// running without a live lease, now (it also runs periodically), and
// returns their ids.
func (l *Leases) Sweep(ctx context.Context) ([]string, error) {
	var runs []string
	err := l.retry.do(ctx, "sweep leases", func(ctx context.Context, _ int) error {
		rows, err := l.pool.Query(ctx, sweep, lostLeaseError, orphanedRunError)
		if err != nil {
			return err
		}
		pairs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
			var p [2]string
			err := r.Scan(&p[0], &p[1])
			return p, err
		})
		runs = runs[:0]
		for _, p := range pairs {
			runs = append(runs, p[1])
			l.logger.Warn("run failed by the lease sweep", "thread_id", p[0], "run_id", p[1])
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: sweep leases: %w", err)
	}
	return runs, nil
}

// renew extends every lease this replica holds in one statement and
// reports the ones that are gone.
func (l *Leases) renew(ctx context.Context) error {
	l.mu.Lock()
	threads := make([]string, 0, len(l.held))
	runs := make([]string, 0, len(l.held))
	for t, r := range l.held {
		threads, runs = append(threads, t), append(runs, r)
	}
	l.mu.Unlock()
	if len(threads) == 0 {
		return nil
	}
	renewed := map[string]bool{}
	err := l.retry.do(ctx, "renew leases", func(ctx context.Context, _ int) error {
		rows, err := l.pool.Query(ctx, `UPDATE antler_run_leases AS l SET expires_at = now() + $3 * interval '1 millisecond'
			FROM unnest($1::text[], $2::text[]) AS h(thread_id, run_id)
			WHERE l.thread_id = h.thread_id AND l.run_id = h.run_id RETURNING l.thread_id`,
			threads, runs, l.ttl.Milliseconds())
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, t := range ids {
			renewed[t] = true
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: renew leases: %w", err)
	}
	var lost [][2]string
	l.mu.Lock()
	for i, t := range threads {
		if !renewed[t] && l.held[t] == runs[i] { // still held, yet the row is gone
			delete(l.held, t)
			lost = append(lost, [2]string{t, runs[i]})
		}
	}
	l.mu.Unlock()
	for _, p := range lost {
		l.logger.Error("run lease lost; stopping the run", "thread_id", p[0], "run_id", p[1])
		if l.onLost != nil {
			l.onLost(p[0], p[1])
		}
	}
	return nil
}

func (l *Leases) loop(ctx context.Context, heartbeat, sweepEvery time.Duration) {
	defer close(l.done)
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	sw := time.NewTicker(sweepEvery)
	defer sw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			// Each pass, retries included, ends before the next one is due.
			bctx, cancel := context.WithTimeout(ctx, heartbeat)
			if err := l.renew(bctx); err != nil && ctx.Err() == nil {
				l.logger.Error("run lease heartbeat failed", "err", err)
			}
			cancel()
		case <-sw.C:
			sctx, cancel := context.WithTimeout(ctx, sweepEvery)
			if _, err := l.Sweep(sctx); err != nil && ctx.Err() == nil {
				l.logger.Error("run lease sweep failed", "err", err)
			}
			cancel()
		}
	}
}
