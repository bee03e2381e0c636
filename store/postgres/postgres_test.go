package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
	"github.com/antlerhq/antler/store/storetest"
	"github.com/antlerhq/antler/thread"
)

func urlOf(t *testing.T) string { return pgtest.URL(t) }

// open returns a store in a fresh schema, closed when the test ends.
func open(t *testing.T) *postgres.Store {
	t.Helper()
	url, schema := pgtest.Schema(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

// TestMigrationsConcurrent starts several stores on one empty schema at
// once, as replicas starting together do: every one must succeed and the
// schema must be migrated exactly once.
func TestMigrationsConcurrent(t *testing.T) {
	url, schema := pgtest.Schema(t)
	const replicas = 4
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	stores := make([]*postgres.Store, replicas)
	for i := range replicas {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	var n, v int
	err := stores[0].Pool().QueryRow(t.Context(), `SELECT count(*), max(version) FROM antler_schema_migrations`).Scan(&n, &v)
	if err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion() || v != postgres.SchemaVersion() {
		t.Errorf("schema_migrations has %d rows up to version %d, want %d", n, v, postgres.SchemaVersion())
	}
	// Every replica sees the others' writes.
	ctx := t.Context()
	if err := stores[1].CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[3].GetThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	// And opening again is a no-op.
	again, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
}

func TestRefusesNewerSchema(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if _, err := s.Pool().Exec(ctx, `INSERT INTO antler_schema_migrations (version) VALUES (999)`); err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := s.Pool().QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{Schema: schema})
	if err == nil {
		t.Fatal("Open on a schema of version 999 succeeded")
	}
}

func TestOpenBadURL(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://user:secret@127.0.0.1:1/x?sslmode=bogus", postgres.Options{})
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

// TestStateIsJSON checks that states are stored as JSON documents that
// SQL can query.
func TestStateIsJSON(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	st := &thread.State{Title: "jsonb", Messages: []model.Message{model.UserText("hello")}}
	if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: st}); err != nil {
		t.Fatal(err)
	}
	var typ, title string
	err := s.Pool().QueryRow(ctx, `SELECT json_typeof(state), state->>'title' FROM antler_checkpoints WHERE thread_id = 't'`).Scan(&typ, &title)
	if err != nil {
		t.Fatal(err)
	}
	if typ != "object" || title != "jsonb" {
		t.Errorf("state column: type %q title %q", typ, title)
	}
}

func TestCheckpointAfterCancel(t *testing.T) {
	s := open(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: &thread.State{}})
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutCheckpoint with a cancelled context = %v, want a context error", err)
	}
}

// TestMigratesVersion2 opens a schema of version 2 (before runs had
// token_usage and an owner) holding a finished run: it is migrated in place, the old
// run reads with no usage, and new usage is recorded.
func TestMigratesVersion2(t *testing.T) {
	url, schema := pgtest.Schema(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	// Turn it back into a version 2 schema, as the previous Antler wrote.
	for _, q := range []string{
		`DROP TABLE antler_checkpoint_messages`,
		`ALTER TABLE antler_checkpoints DROP COLUMN messages`,
		`ALTER TABLE antler_checkpoints DROP COLUMN pinned`,
		`ALTER TABLE antler_runs DROP COLUMN token_usage`,
		`ALTER TABLE antler_runs DROP COLUMN owner`,
		`DROP INDEX antler_runs_active`,
		`DROP INDEX antler_threads_busy`,
		`DELETE FROM antler_schema_migrations WHERE version > 2`,
		`INSERT INTO antler_runs (id, thread_id, user_id, status, stop_reason, created_at, updated_at)
		 VALUES ('old', 't', 'u', 'success', 'completed', now(), now())`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()

	s, err = postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, err := s.GetRun(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != store.RunSuccess || old.Usage != nil {
		t.Errorf("migrated run = %+v, want success with no usage", old)
	}
	usage := &store.RunUsage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3, LeadAgentTokens: 3}
	if err := s.UpdateRun(ctx, "old", store.RunUpdate{Status: store.RunSuccess, Usage: usage}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetRun(ctx, "old"); err != nil || !cmp.Equal(got.Usage, usage) {
		t.Errorf("usage after migration = %+v, %v; want %+v", got, err, usage)
	}
}
