// Package sqlite is the default [store.Store]: an embedded SQLite database
// (modernc.org/sqlite, pure Go, no cgo) in WAL mode, with one writer
// connection and a small pool of readers. Thread states are stored as JSON
// blobs, one row per checkpoint, whose messages are rows of their own
// shared by every checkpoint that holds them (see package store/cpmsg).
//
// Several processes may share a database; each owns the runs it records,
// and opening the database records the runs of processes that stopped as
// failed (see StoppedRunError).
//
// Start with [Open].
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/cpmsg"
)

// FileName is the database file name Antler uses inside its data
// directory.
const FileName = "antler.db"

// Options configure Open. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by
	// another process; 0 means 5 s.
	BusyTimeout time.Duration
	// Synchronous is SQLite's synchronous pragma: "NORMAL" (the default:
	// in WAL mode a committed step survives a process crash, and at worst
	// the last commits are lost on power failure, never corrupted) or
	// "FULL" (every commit is fsynced).
	Synchronous string
	// Readers is the size of the read pool; 0 means 4.
	Readers int
	// Retention is the checkpoint retention policy (config
	// database.checkpoint_retention); the zero value is the default.
	Retention store.Retention
	// Logger receives migration notes; nil discards.
	Logger *slog.Logger
}

// Store is a SQLite-backed store.Store. It is safe for concurrent use.
type Store struct {
	// immutable after Open
	path      string
	ownersDir string
	owner     *owner  // this process's claim on the runs it records
	writer    *sql.DB // one connection: SQLite has one writer at a time
	reader    *sql.DB
	logger    *slog.Logger
	retention store.Retention
	// parents remembers each thread's newest checkpoint's message rows.
	parents cpmsg.Cache
	// Prepared statements of the per-step path (parsing SQL dominated a
	// checkpoint's cost otherwise).
	touchThread, insertCheckpoint, insertMessage, parentRow *sql.Stmt
}

var _ store.Store = (*Store)(nil)

// OpenDir opens (creating if needed) the database FileName in dir.
func OpenDir(dir string, opts Options) (*Store, error) {
	return Open(filepath.Join(dir, FileName), opts)
}

// Open opens (creating if needed) the database at path, migrates its
// schema, claims an owner lock in the directory path+"-owners", and
// records the runs of processes that stopped (killed, crashed) as failed
// and frees their threads before returning. The parent directory is
// created with mode 0700.
func Open(path string, o Options) (*Store, error) {
	o.BusyTimeout = cmp.Or(o.BusyTimeout, 5*time.Second)
	o.Synchronous = strings.ToUpper(cmp.Or(o.Synchronous, "NORMAL"))
	if o.Synchronous != "NORMAL" && o.Synchronous != "FULL" {
		return nil, fmt.Errorf("sqlite: synchronous must be NORMAL or FULL, not %q", o.Synchronous)
	}
	o.Readers = cmp.Or(o.Readers, 4)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create directory: %w", err)
	}
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()),
		"journal_mode(WAL)",
		"synchronous(" + o.Synchronous + ")",
	}
	dsn := func(extra ...string) string {
		q := url.Values{}
		for _, p := range append(pragmas, extra...) {
			q.Add("_pragma", p)
		}
		return "file:" + filepath.ToSlash(path) + "?" + q.Encode()
	}
	writer, err := sql.Open("sqlite", dsn()+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	s := &Store{path: path, ownersDir: path + ownersSuffix, writer: writer, logger: logger, retention: o.Retention}
	if err := s.migrate(context.Background()); err != nil {
		writer.Close()
		return nil, err
	}
	if s.owner, err = claimOwner(s.ownersDir); err != nil {
		writer.Close()
		return nil, err
	}
	if err := s.recoverRuns(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	reader, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(o.Readers)
	reader.SetMaxIdleConns(o.Readers)
	s.reader = reader
	if err := s.prepare(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the database file path.
func (s *Store) Path() string { return s.path }

func (s *Store) prepare(ctx context.Context) error {
	var err error
	prep := func(db *sql.DB, q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.PrepareContext(ctx, q)
		return st
	}
	s.touchThread = prep(s.writer, `UPDATE threads SET updated_at = ?, title = CASE WHEN ? = '' THEN title ELSE ? END WHERE id = ?`)
	s.insertCheckpoint = prep(s.writer, `INSERT INTO checkpoints (thread_id, id, parent_id, run_id, step, state, metadata, created_at, messages) VALUES (?,?,?,?,?,?,?,?,?)`)
	s.insertMessage = prep(s.writer, `INSERT INTO checkpoint_messages (thread_id, body) VALUES (?,?)`)
	s.parentRow = prep(s.writer, `SELECT messages IS NULL FROM checkpoints WHERE thread_id = ? AND id = ?`)
	if err != nil {
		return fmt.Errorf("sqlite: prepare: %w", err)
	}
	return nil
}

// Close closes both connection pools and gives up the owner lock (runs
// of this process still pending or running are then failed by the next
// Open).
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.touchThread, s.insertCheckpoint, s.insertMessage, s.parentRow} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
	}
	errs = append(errs, s.writer.Close())
	if s.owner != nil {
		errs = append(errs, s.owner.release())
	}
	return errors.Join(errs...)
}

// schemaVersion is the user_version this Antler writes: 1 created the
// tables, 2 added runs.token_usage, 3 runs.owner, 4 the message rows
// checkpoints share (checkpoint_messages, checkpoints.messages and
// checkpoints.pinned), 5 the MCP background tasks (mcptasks.go), 6 the
// scheduled tasks and their runs (scheduled_tasks.go), 7 the notices of
// MCP background tasks (mcptasks.go).
const schemaVersion = 7

func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlite: read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("sqlite: %s has schema version %d, newer than this Antler (%d)", s.path, v, schemaVersion)
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer tx.Rollback()
	var stmts []string
	if v < 1 {
		stmts = append(stmts, schemaV1...)
	}
	if v < 2 {
		// NULL: no usage recorded (a run still going, or one that ended
		// before version 2).
		stmts = append(stmts, `ALTER TABLE runs ADD COLUMN token_usage TEXT`)
	}
	if v < 3 {
		// The process that recorded the run ('': before version 3,
		// recovered as a stopped process's); the partial indexes serve
		// recovery.
		stmts = append(stmts, `ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
			`CREATE INDEX IF NOT EXISTS runs_active ON runs(owner) WHERE status IN ('pending', 'running')`,
			`CREATE INDEX IF NOT EXISTS threads_busy ON threads(id) WHERE status = 'busy'`)
	}
	if v < 4 {
		stmts = append(stmts, schemaV4...)
	}
	if v < 5 {
		stmts = append(stmts, schemaMCPTasks...)
	}
	if v < 6 {
		stmts = append(stmts, schemaScheduledTasks...)
	}
	if v < 7 {
		more, err := schemaMCPTaskNotices(ctx, tx)
		if err != nil {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
		stmts = append(stmts, more...)
	}
	stmts = append(stmts, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	s.logger.Debug("sqlite schema migrated", "path", s.path, "from", v, "to", schemaVersion)
	return nil
}

// schemaV1 creates the tables of schema version 1. Released versions never
// change: later versions alter them.
var schemaV1 = []string{
	`CREATE TABLE IF NOT EXISTS threads (
			id TEXT PRIMARY KEY,
			user_id TEXT NOT NULL,
			agent_name TEXT NOT NULL DEFAULT '',
			status TEXT NOT NULL DEFAULT 'idle',
			title TEXT NOT NULL DEFAULT '',
			metadata TEXT NOT NULL DEFAULT '{}',
			created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS threads_user_updated ON threads(user_id, updated_at DESC)`,
	`CREATE TABLE IF NOT EXISTS checkpoints (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			thread_id TEXT NOT NULL,
			id TEXT NOT NULL,
			parent_id TEXT NOT NULL DEFAULT '',
			run_id TEXT NOT NULL DEFAULT '',
			step INTEGER NOT NULL,
			state BLOB NOT NULL,
			metadata TEXT NOT NULL DEFAULT '{}',
			created_at INTEGER NOT NULL,
			UNIQUE(thread_id, id))`,
	`CREATE INDEX IF NOT EXISTS checkpoints_thread_seq ON checkpoints(thread_id, seq DESC)`,
	`CREATE TABLE IF NOT EXISTS runs (
			id TEXT PRIMARY KEY,
			thread_id TEXT NOT NULL,
			user_id TEXT NOT NULL DEFAULT '',
			agent_name TEXT NOT NULL DEFAULT '',
			status TEXT NOT NULL,
			stop_reason TEXT NOT NULL DEFAULT '',
			error TEXT NOT NULL DEFAULT '',
			metadata TEXT NOT NULL DEFAULT '{}',
			created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS runs_thread_created ON runs(thread_id, created_at DESC)`,
}

// schemaV4 stores each message of a thread once. A checkpoint's
// messages column lists its message rows (see package cpmsg); NULL is a
// checkpoint written before version 4, whose state holds its messages.
// pinned is 1 for a checkpoint whose child lacks one of its messages:
// retention keeps it (the messages page may need it). Retention never
// deletes the rows of before version 4.
var schemaV4 = []string{
	`CREATE TABLE IF NOT EXISTS checkpoint_messages (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			thread_id TEXT NOT NULL,
			body BLOB NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS checkpoint_messages_thread ON checkpoint_messages(thread_id, id)`,
	`ALTER TABLE checkpoints ADD COLUMN messages TEXT`,
	`ALTER TABLE checkpoints ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0`,
}

// now returns the current time at the precision every store keeps
// (microseconds, as Postgres).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func toNanos(t time.Time) int64   { return t.UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func encodeMeta(m map[string]any) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("sqlite: encode metadata: %w", err)
	}
	return string(b), nil
}

func decodeMeta(s string) (map[string]any, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("sqlite: decode metadata: %w", err)
	}
	return m, nil
}

// CreateThread implements store.Store.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if t.ID == "" {
		return errors.New("sqlite: thread id is empty")
	}
	n := now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = n
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.Status = cmp.Or(t.Status, store.ThreadIdle)
	meta, err := encodeMeta(t.Metadata)
	if err != nil {
		return err
	}
	_, err = s.writer.ExecContext(ctx,
		`INSERT INTO threads (id, user_id, agent_name, status, title, metadata, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)`,
		t.ID, t.UserID, t.AgentName, t.Status, t.Title, meta, toNanos(t.CreatedAt), toNanos(t.UpdatedAt))
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("thread %q: %w", t.ID, store.ErrExists)
		}
		return fmt.Errorf("sqlite: create thread: %w", err)
	}
	return nil
}

func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

const threadCols = `id, user_id, agent_name, status, title, metadata, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanThread(r scanner) (*store.Thread, error) {
	var t store.Thread
	var meta string
	var created, updated int64
	if err := r.Scan(&t.ID, &t.UserID, &t.AgentName, &t.Status, &t.Title, &meta, &created, &updated); err != nil {
		return nil, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	t.Metadata, t.CreatedAt, t.UpdatedAt = m, fromNanos(created), fromNanos(updated)
	return &t, nil
}

// GetThread implements store.Store.
func (s *Store) GetThread(ctx context.Context, id string) (*store.Thread, error) {
	t, err := scanThread(s.reader.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get thread: %w", err)
	}
	return t, nil
}

// UpdateThread implements store.Store.
func (s *Store) UpdateThread(ctx context.Context, t *store.Thread) error {
	meta, err := encodeMeta(t.Metadata)
	if err != nil {
		return err
	}
	t.UpdatedAt = now()
	res, err := s.writer.ExecContext(ctx,
		`UPDATE threads SET status = ?, title = ?, metadata = ?, updated_at = ? WHERE id = ?`,
		cmp.Or(t.Status, store.ThreadIdle), t.Title, meta, toNanos(t.UpdatedAt), t.ID)
	if err != nil {
		return fmt.Errorf("sqlite: update thread: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("thread %q: %w", t.ID, store.ErrNotFound)
	}
	return nil
}

// SearchThreads implements store.Store.
func (s *Store) SearchThreads(ctx context.Context, q store.ThreadQuery) ([]*store.Thread, error) {
	var where []string
	var args []any
	if q.UserID != "" {
		where = append(where, "user_id = ?")
		args = append(args, q.UserID)
	}
	if q.Status != "" {
		where = append(where, "status = ?")
		args = append(args, q.Status)
	}
	for k, v := range q.Metadata {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("sqlite: metadata filter %q: %w", k, err)
		}
		where = append(where, "json_extract(metadata, ?) IS json_extract(?, '$')")
		args = append(args, `$."`+strings.ReplaceAll(k, `"`, `\"`)+`"`, string(b))
	}
	query := `SELECT ` + threadCols + ` FROM threads`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY updated_at DESC, id LIMIT ? OFFSET ?"
	args = append(args, cmp.Or(q.Limit, 100), max(q.Offset, 0))
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search threads: %w", err)
	}
	defer rows.Close()
	var out []*store.Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search threads: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// DeleteThread implements store.Store.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete thread: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete thread: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	for _, st := range []string{`DELETE FROM checkpoints WHERE thread_id = ?`, `DELETE FROM checkpoint_messages WHERE thread_id = ?`,
		`DELETE FROM runs WHERE thread_id = ?`} {
		if _, err := tx.ExecContext(ctx, st, id); err != nil {
			return fmt.Errorf("sqlite: delete thread: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete thread: %w", err)
	}
	s.parents.Forget(id)
	return nil
}

// CreateRun implements store.Store. The run is owned by this process.
func (s *Store) CreateRun(ctx context.Context, r *store.Run) error {
	if r.ID == "" {
		return errors.New("sqlite: run id is empty")
	}
	n := now()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = n
	}
	r.UpdatedAt = r.CreatedAt
	r.Status = cmp.Or(r.Status, store.RunPending)
	meta, err := encodeMeta(r.Metadata)
	if err != nil {
		return err
	}
	usage, err := encodeUsage(r.Usage)
	if err != nil {
		return err
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: create run: %w", err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ?`, r.ThreadID).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %q: %w", r.ThreadID, store.ErrNotFound)
		}
		return fmt.Errorf("sqlite: create run: %w", err)
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO runs (id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, token_usage, created_at, updated_at, owner) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.ThreadID, r.UserID, r.AgentName, r.Status, r.StopReason, r.Error, meta, usage, toNanos(r.CreatedAt), toNanos(r.UpdatedAt), s.owner.id)
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
		}
		return fmt.Errorf("sqlite: create run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: create run: %w", err)
	}
	return nil
}

// UpdateRun implements store.Store.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	usage, err := encodeUsage(u.Usage)
	if err != nil {
		return err
	}
	res, err := s.writer.ExecContext(ctx,
		`UPDATE runs SET status = ?, stop_reason = ?, error = ?, token_usage = coalesce(?, token_usage), updated_at = ? WHERE id = ?`,
		u.Status, u.StopReason, u.Error, usage, toNanos(now()), id)
	if err != nil {
		return fmt.Errorf("sqlite: update run: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

const runCols = `id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, token_usage, created_at, updated_at`

func scanRun(r scanner) (*store.Run, error) {
	var run store.Run
	var meta string
	var usage sql.NullString
	var created, updated int64
	if err := r.Scan(&run.ID, &run.ThreadID, &run.UserID, &run.AgentName, &run.Status, &run.StopReason, &run.Error, &meta, &usage,
		&created, &updated); err != nil {
		return nil, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	if usage.Valid {
		run.Usage = new(store.RunUsage)
		if err := json.Unmarshal([]byte(usage.String), run.Usage); err != nil {
			return nil, fmt.Errorf("sqlite: decode usage of run %s: %w", run.ID, err)
		}
	}
	run.Metadata, run.CreatedAt, run.UpdatedAt = m, fromNanos(created), fromNanos(updated)
	return &run, nil
}

// encodeUsage is the token_usage column of u: NULL for nil.
func encodeUsage(u *store.RunUsage) (any, error) {
	if u == nil {
		return nil, nil
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode usage: %w", err)
	}
	return string(b), nil
}

// GetRun implements store.Store.
func (s *Store) GetRun(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.reader.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get run: %w", err)
	}
	return r, nil
}

// ListRuns implements store.Store.
func (s *Store) ListRuns(ctx context.Context, threadID string) ([]*store.Run, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC`, threadID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list runs: %w", err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
