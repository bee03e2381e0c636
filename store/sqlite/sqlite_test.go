package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/store/storetest"
	"github.com/antlerhq/antler/thread"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestThreadSurvivesReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "data")
	s, err := sqlite.OpenDir(dir, sqlite.Options{Synchronous: "full"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	st := &thread.State{Messages: []model.Message{model.UserText("remember me")}}
	if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: st}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := sqlite.OpenDir(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	cp, err := s2.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.State.Messages) != 1 || cp.State.Messages[0].Content != "remember me" {
		t.Fatalf("reopened state = %+v", cp.State)
	}
}

func TestOpenRejectsBadSynchronous(t *testing.T) {
	if _, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{Synchronous: "OFF"}); err == nil {
		t.Fatal("want an error for synchronous OFF")
	}
}

// TestMigratesVersion1 opens a database of schema version 1 (before runs
// had token_usage and an owner) holding a finished run and one left
// running: it is migrated in place, the old run reads with no usage, new
// usage is recorded, and the run left running (no owner: a process that
// stopped) is recorded as failed and its thread freed.
func TestMigratesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Turn it back into a version 1 database, as the previous Antler wrote.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE checkpoint_messages`,
		`ALTER TABLE checkpoints DROP COLUMN pinned`,
		`ALTER TABLE checkpoints DROP COLUMN messages`,
		`DROP INDEX runs_active`,
		`DROP INDEX threads_busy`,
		`ALTER TABLE runs DROP COLUMN owner`,
		`ALTER TABLE runs DROP COLUMN token_usage`,
		`INSERT INTO runs (id, thread_id, user_id, status, stop_reason, created_at, updated_at) VALUES ('old', 't', 'u', 'success', 'completed', 1, 1)`,
		`INSERT INTO runs (id, thread_id, user_id, status, created_at, updated_at) VALUES ('stuck', 't', 'u', 'running', 2, 2)`,
		`UPDATE threads SET status = 'busy'`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(path, sqlite.Options{})
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
	if got, err := s.GetRun(ctx, "stuck"); err != nil || got.Status != store.RunError || got.Error != sqlite.StoppedRunError {
		t.Errorf("run left running = %+v, %v; want error %q", got, err, sqlite.StoppedRunError)
	}
	if th, err := s.GetThread(ctx, "t"); err != nil || th.Status != store.ThreadError {
		t.Errorf("thread of the run left running = %+v, %v; want error", th, err)
	}
}
