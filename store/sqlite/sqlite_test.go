package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/store/storetest"
	"github.com/antlerhq/antler/thread"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.OpenDir(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestThreadSurvivesReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "data")
	s, err := sqlite.OpenDir(dir, &sqlite.Options{Synchronous: "full"})
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
	s2, err := sqlite.OpenDir(dir, nil)
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
	if _, err := sqlite.OpenDir(t.TempDir(), &sqlite.Options{Synchronous: "OFF"}); err == nil {
		t.Fatal("want an error for synchronous OFF")
	}
}
