package postgres_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
	"github.com/antlerhq/antler/store/storetest"
	"github.com/antlerhq/antler/thread"
)

func TestCheckpoints(t *testing.T) {
	storetest.RunCheckpoints(t, func(t *testing.T, r store.Retention) store.Store {
		url, schema := pgtest.Schema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, Retention: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, sizes)
}

func TestStepCost(t *testing.T) {
	storetest.RunStepCost(t, func(t *testing.T) store.Store {
		url, schema := pgtest.Schema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(s store.Store) (int64, int64) { return postgres.Counts(s.(*postgres.Store)) })
}

// sizes measures a thread's rows.
func sizes(t *testing.T, st store.Store, threadID string) (int64, int) {
	t.Helper()
	s := st.(*postgres.Store)
	var cps, msgs int64
	var rows int
	if err := s.Pool().QueryRow(t.Context(), `SELECT coalesce(sum(octet_length(state::text) + coalesce(octet_length(messages::text), 0)), 0)
		FROM antler_checkpoints WHERE thread_id = $1`, threadID).Scan(&cps); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool().QueryRow(t.Context(), `SELECT coalesce(sum(octet_length(body::text)), 0), count(*)
		FROM antler_checkpoint_messages WHERE thread_id = $1`, threadID).Scan(&msgs, &rows); err != nil {
		t.Fatal(err)
	}
	return cps + msgs, rows
}

// TestMigratesVersion4Checkpoints opens a schema of version 4, whose
// checkpoints hold whole states: it is migrated in place, its
// checkpoints read as written, and a write after one of them stores its
// messages once.
func TestMigratesVersion4Checkpoints(t *testing.T) {
	url, schema := pgtest.Schema(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	old := &thread.State{Title: "old", Messages: []model.Message{{ID: "a", Role: model.RoleUser, Content: "hi"},
		{ID: "b", Role: model.RoleAssistant, Content: "hello"}}}
	blob, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE antler_checkpoint_messages`,
		`ALTER TABLE antler_checkpoints DROP COLUMN messages`,
		`ALTER TABLE antler_checkpoints DROP COLUMN pinned`,
		`DELETE FROM antler_schema_migrations WHERE version > 4`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO antler_checkpoints (thread_id, id, step, state, created_at)
		VALUES ('t', 'old', 0, $1, now())`, blob); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old, got.State); got.ID != "old" || diff != "" {
		t.Fatalf("old checkpoint %s (-want +got):\n%s", got.ID, diff)
	}
	next := old.Clone()
	next.Messages = append(next.Messages, model.Message{ID: "c", Role: model.RoleUser, Content: "more"})
	cp := &store.Checkpoint{ThreadID: "t", ParentID: "old", Step: 1, State: next}
	if err := s.PutCheckpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	again, err := s.GetCheckpoint(ctx, "t", cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(next, again.State); diff != "" {
		t.Errorf("checkpoint after the old one (-want +got):\n%s", diff)
	}
	if _, rows := sizes(t, s, "t"); rows != 3 {
		t.Errorf("%d message rows, want 3", rows)
	}
}

// TestReplicasReadEachOthersCheckpoints: each replica keeps the latest
// checkpoint it wrote or read in memory; a checkpoint another replica
// wrote since is read from the database, and a write that continues it
// (with KeptMessages) is read back whole by the first.
func TestReplicasReadEachOthersCheckpoints(t *testing.T) {
	url, schema := pgtest.Schema(t)
	var rs [2]*postgres.Store
	for i := range rs {
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		rs[i] = s
	}
	ctx := t.Context()
	if err := rs[0].CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	msgs := []model.Message{model.UserText("q0")}
	parent := ""
	for i := range 6 {
		w, r := rs[i%2], rs[(i+1)%2]
		// The writer continues the latest checkpoint as it reads it.
		kept := 0
		if parent != "" {
			cp, err := w.LatestCheckpoint(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if cp.ID != parent {
				t.Fatalf("step %d: replica %d reads checkpoint %s as the latest, want %s", i, i%2, cp.ID, parent)
			}
			kept = len(cp.State.Messages)
			msgs = append(cp.State.Messages, model.Message{ID: fmt.Sprintf("a%d", i), Role: model.RoleAssistant, Content: fmt.Sprint("answer ", i)})
		}
		cp := &store.Checkpoint{ThreadID: "t", ParentID: parent, Step: i, KeptMessages: kept, State: &thread.State{Messages: msgs}}
		if err := w.PutCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		parent = cp.ID
		got, err := r.LatestCheckpoint(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != cp.ID {
			t.Fatalf("step %d: the other replica reads %s as the latest, want %s", i, got.ID, cp.ID)
		}
		if diff := cmp.Diff(msgs, got.State.Messages); diff != "" {
			t.Fatalf("step %d: the other replica reads (-want +got):\n%s", i, diff)
		}
	}
}
