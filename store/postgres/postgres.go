// Package postgres is the PostgreSQL [store.Store], for several gateway
// replicas sharing threads, checkpoints and runs. It uses
// github.com/jackc/pgx/v5 (pgxpool). A checkpoint is one row, whose
// messages are rows of their own shared by every checkpoint that holds
// them (see package store/cpmsg); its state is a json column (kept byte for byte, so that raw tool arguments round-trip
// exactly, and still queryable with SQL's JSON operators); metadata
// columns are jsonb.
//
// [Open] applies the versioned schema migrations under a transaction-level
// advisory lock, so that replicas starting at once do not race. Besides
// the store, the package provides what replicas need to behave as one
// service: [Leases] (one run per thread across replicas, with expiry,
// heartbeat and a sweeper that fails the runs of a dead replica) and
// [Events] (a run's stream frames stored in a table and announced with
// LISTEN/NOTIFY, so that a client can re-attach from any replica).
//
// Every table is named antler_*; Options.Schema puts them in their own
// schema instead of the connection's search_path.
package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/cpmsg"
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Schema, when set, is created if missing and becomes the search_path
	// of every connection, so that Antler's tables live apart (config
	// database.postgres_schema). "" uses the connection's search_path.
	Schema string
	// MaxConns caps the pool; 0 keeps the URL's pool_max_conns, or pgx's
	// default (the larger of 4 and the number of CPUs).
	MaxConns int32
	// Retry bounds the retries of statements that failed on a transient
	// connection error; the zero value is the default.
	Retry RetryOptions
	// Retention is the checkpoint retention policy (config
	// database.checkpoint_retention); the zero value is the default.
	Retention store.Retention
	// Logger receives migration notes and retries; nil discards.
	Logger *slog.Logger
}

// Store is a PostgreSQL-backed store.Store. It is safe for concurrent use.
type Store struct {
	// immutable after Open
	pool      *pgxpool.Pool
	schema    string
	retry     retrier // shared with Leases
	logger    *slog.Logger
	retention store.Retention
	// parents remembers each thread's newest checkpoint's message rows.
	parents cpmsg.Cache
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string), migrates its schema and returns the store.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", redact(err))
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	}
	cfg.ShouldPing = shouldPing
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", redact(err))
	}
	s := &Store{pool: pool, schema: o.Schema, retry: newRetrier(o.Retry, logger), logger: logger, retention: o.Retention}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Pool returns the connection pool, shared with Leases and Events.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// redact drops the connection string from pgx's parse errors, which may
// carry a password.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return fmt.Errorf("invalid database URL: %s", cmp.Or(errText(pe.Unwrap()), "cannot parse"))
	}
	return err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// now returns the current time at the precision Postgres keeps
// (microseconds).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func encodeMeta(m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode metadata: %w", err)
	}
	return b, nil
}

func decodeMeta(b []byte) (map[string]any, error) {
	if len(b) == 0 || string(b) == "{}" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("postgres: decode metadata: %w", err)
	}
	return m, nil
}

// SQLSTATE codes the store maps to store errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
