package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrationLock is the advisory-lock key held (for one transaction) while
// migrations run: "antler" in ASCII.
const migrationLock int64 = 0x616e746c6572

// migrations are applied in order; migrations[i] is schema version i+1.
// Append only: a released migration never changes.
var migrations = []string{
	// 1: threads, checkpoints, runs, run leases and run events.
	`CREATE TABLE antler_threads (
		id         text PRIMARY KEY,
		user_id    text NOT NULL,
		agent_name text NOT NULL DEFAULT '',
		status     text NOT NULL DEFAULT 'idle',
		title      text NOT NULL DEFAULT '',
		metadata   jsonb NOT NULL DEFAULT '{}',
		created_at timestamptz NOT NULL,
		updated_at timestamptz NOT NULL);
	CREATE INDEX antler_threads_updated ON antler_threads (updated_at DESC, id);
	CREATE INDEX antler_threads_user_updated ON antler_threads (user_id, updated_at DESC, id);

	CREATE TABLE antler_checkpoints (
		seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		thread_id  text NOT NULL REFERENCES antler_threads (id) ON DELETE CASCADE,
		id         text NOT NULL,
		parent_id  text NOT NULL DEFAULT '',
		run_id     text NOT NULL DEFAULT '',
		step       integer NOT NULL,
		state      json NOT NULL, -- json, not jsonb: kept byte for byte (raw tool arguments)
		metadata   jsonb NOT NULL DEFAULT '{}',
		created_at timestamptz NOT NULL,
		UNIQUE (thread_id, id));
	CREATE INDEX antler_checkpoints_thread_seq ON antler_checkpoints (thread_id, seq DESC);

	CREATE TABLE antler_runs (
		seq         bigint GENERATED ALWAYS AS IDENTITY,
		id          text PRIMARY KEY,
		thread_id   text NOT NULL REFERENCES antler_threads (id) ON DELETE CASCADE,
		user_id     text NOT NULL DEFAULT '',
		agent_name  text NOT NULL DEFAULT '',
		status      text NOT NULL,
		stop_reason text NOT NULL DEFAULT '',
		error       text NOT NULL DEFAULT '',
		metadata    jsonb NOT NULL DEFAULT '{}',
		created_at  timestamptz NOT NULL,
		updated_at  timestamptz NOT NULL);
	CREATE INDEX antler_runs_thread_created ON antler_runs (thread_id, created_at DESC, seq DESC);

	CREATE TABLE antler_run_leases (
		thread_id   text PRIMARY KEY REFERENCES antler_threads (id) ON DELETE CASCADE,
		run_id      text NOT NULL,
		owner       text NOT NULL,
		acquired_at timestamptz NOT NULL,
		expires_at  timestamptz NOT NULL);
	CREATE INDEX antler_run_leases_expires ON antler_run_leases (expires_at);

	CREATE TABLE antler_run_events (
		run_id     text NOT NULL,
		seq        integer NOT NULL,
		thread_id  text NOT NULL REFERENCES antler_threads (id) ON DELETE CASCADE,
		frame      bytea NOT NULL,
		created_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (run_id, seq));
	CREATE INDEX antler_run_events_created ON antler_run_events (created_at);
	CREATE INDEX antler_run_events_thread ON antler_run_events (thread_id);`,
	// 2: versions of extensions_config.json shared by replicas.
	`CREATE TABLE antler_extensions (
		version    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		doc        json NOT NULL,
		sha256     text NOT NULL,
		owner      text NOT NULL DEFAULT '',
		created_at timestamptz NOT NULL DEFAULT now());`,
	// 3: a run's token usage (NULL: none recorded, as for a run still
	// going or one that ended before this version).
	`ALTER TABLE antler_runs ADD COLUMN token_usage jsonb;`,
	// 4: the replica that held a run's lease when it was recorded ('':
	// none, as for runs recorded before this version or outside a
	// gateway), so that the lease sweep can fail an owned run left
	// running without a live lease; the partial indexes serve that sweep.
	`ALTER TABLE antler_runs ADD COLUMN owner text NOT NULL DEFAULT '';
	CREATE INDEX antler_runs_active ON antler_runs (id) WHERE status IN ('pending', 'running');
	CREATE INDEX antler_threads_busy ON antler_threads (id) WHERE status = 'busy';`,
}

// migrate applies the missing migrations in one transaction that holds an
// advisory lock: replicas starting at once wait for each other, and the
// second finds nothing left to do. A database migrated by a newer Antler
// is refused.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	if s.schema != "" {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return fmt.Errorf("postgres: create schema %q: %w", s.schema, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS antler_schema_migrations (
		version integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM antler_schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("postgres: read schema version: %w", err)
	}
	if current > len(migrations) {
		return fmt.Errorf("postgres: the database has schema version %d, newer than this Antler (%d)", current, len(migrations))
	}
	for v := current + 1; v <= len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
			return fmt.Errorf("postgres: migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO antler_schema_migrations (version) VALUES ($1)`, v); err != nil {
			return fmt.Errorf("postgres: migration %d: %w", v, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if current < len(migrations) {
		s.logger.Info("postgres schema migrated", "from", current, "to", len(migrations), "schema", s.schema)
	}
	return nil
}
