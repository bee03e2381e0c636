package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/store/storetest"
	"github.com/antlerhq/antler/thread"
)

func TestCheckpoints(t *testing.T) {
	storetest.RunCheckpoints(t, func(t *testing.T, r store.Retention) store.Store {
		s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, sizes)
}

func TestStepCost(t *testing.T) {
	storetest.RunStepCost(t, func(t *testing.T) store.Store {
		s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(s store.Store) (int64, int64) { return sqlite.Counts(s.(*sqlite.Store)) })
}

// sizes measures a thread's rows through a connection of its own.
func sizes(t *testing.T, s store.Store, threadID string) (int64, int) {
	t.Helper()
	db, err := sql.Open("sqlite", s.(*sqlite.Store).Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cps, msgs int64
	var rows int
	if err := db.QueryRowContext(t.Context(), `SELECT coalesce(sum(length(state) + coalesce(length(messages), 0)), 0)
		FROM checkpoints WHERE thread_id = ?`, threadID).Scan(&cps); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(t.Context(), `SELECT coalesce(sum(length(body)), 0), count(*)
		FROM checkpoint_messages WHERE thread_id = ?`, threadID).Scan(&msgs, &rows); err != nil {
		t.Fatal(err)
	}
	return cps + msgs, rows
}

// TestMigratesVersion3Checkpoints opens a database of schema version 3,
// whose checkpoints hold whole states (made by running version 3's DDL
// on a fresh file): it is migrated in place, its checkpoints read as
// written, a write after one of them stores its messages once, and
// retention keeps the old checkpoints.
func TestMigratesVersion3Checkpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	old := map[string][]model.Message{}
	stmts := append(append([]string(nil), sqlite.SchemaV1...),
		`ALTER TABLE runs ADD COLUMN token_usage TEXT`,
		`ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
		`INSERT INTO threads (id, user_id, created_at, updated_at) VALUES ('t', 'u', 1, 1)`)
	for i := range 40 {
		msgs := chatOf(i + 1)
		st, err := json.Marshal(&thread.State{Title: "old", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("old%02d", i)
		old[id] = msgs
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO checkpoints (thread_id, id, parent_id, step, state, created_at)
			VALUES ('t', '%s', '%s', %d, '%s', %d)`, id, map[bool]string{true: fmt.Sprintf("old%02d", i-1)}[i > 0], i, st, i+1))
	}
	stmts = append(stmts, `PRAGMA user_version = 3`)
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := sqlite.Open(path, sqlite.Options{Retention: store.Retention{KeepLatest: 5}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	latest, err := s.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old["old39"], latest.State.Messages); latest.ID != "old39" || diff != "" {
		t.Fatalf("latest old checkpoint %s (-want +got):\n%s", latest.ID, diff)
	}
	parent := latest.ID
	for i := 40; i < 40+2*store.PruneEvery; i++ {
		cp := &store.Checkpoint{ThreadID: "t", ParentID: parent, Step: i, State: &thread.State{Messages: chatOf(i + 1)}}
		if err := s.PutCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		parent = cp.ID
	}
	if got := messagesOf(t, s, parent); !cmp.Equal(got, chatOf(40+2*store.PruneEvery)) {
		t.Errorf("newest checkpoint has %d messages", len(got))
	}
	for id, msgs := range old {
		if diff := cmp.Diff(msgs, messagesOf(t, s, id)); diff != "" {
			t.Errorf("old checkpoint %s after migration (-want +got):\n%s", id, diff)
		}
	}
	if _, rows := sizes(t, s, "t"); rows != 40+2*store.PruneEvery {
		t.Errorf("%d message rows, want one per message (%d)", rows, 40+2*store.PruneEvery)
	}
}

func chatOf(n int) []model.Message {
	var out []model.Message
	for i := range n {
		out = append(out, model.Message{ID: fmt.Sprintf("m%d", i), Role: model.RoleUser, Content: fmt.Sprintf("message %d", i)})
	}
	return out
}

func messagesOf(t *testing.T, s store.Store, id string) []model.Message {
	t.Helper()
	cp, err := s.GetCheckpoint(t.Context(), "t", id)
	if err != nil {
		t.Fatalf("checkpoint %s: %v", id, err)
	}
	return cp.State.Messages
}
