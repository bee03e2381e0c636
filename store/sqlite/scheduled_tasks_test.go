package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/store/storetest"
)

func TestScheduledTasksConformance(t *testing.T) {
	storetest.RunScheduledTasks(t, func(t *testing.T) store.ScheduledTasks {
		s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestScheduledTasksMigrateInPlace opens a database of schema version 3,
// as an earlier Antler wrote it: it gains the scheduled-task tables.
func TestScheduledTasksMigrateInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := append(append([]string(nil), sqlite.SchemaV1...),
		`ALTER TABLE runs ADD COLUMN token_usage TEXT`,
		`ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
		`PRAGMA user_version = 3`)
	for _, q := range stmts {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	task := &store.ScheduledTask{ID: "a", UserID: "u", ContextMode: "fresh_thread_per_run", Title: "t", Prompt: "p",
		ScheduleType: "cron", ScheduleSpec: map[string]any{"cron": "* * * * *"}, Timezone: "UTC", Status: store.TaskEnabled, OverlapPolicy: "skip"}
	if err := s.CreateScheduledTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetScheduledTask(t.Context(), "a"); err != nil || got.Prompt != "p" {
		t.Fatalf("task after migration = %+v, %v", got, err)
	}
}
