package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/thread"
)

// BenchmarkPutCheckpoint measures one checkpoint write of a thread of 20
// messages (about 4 KB of JSON), the cost the agent loop adds per step.
func BenchmarkPutCheckpoint(b *testing.B) {
	s, err := sqlite.OpenDir(b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		b.Fatal(err)
	}
	st := &thread.State{}
	for i := range 20 {
		st.Messages = append(st.Messages, model.Message{ID: fmt.Sprint(i), Role: model.RoleAssistant,
			Content: "some text of a typical short message, about one sentence long, repeated for size " + fmt.Sprint(i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: st}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLatestCheckpoint measures loading a thread's state.
func BenchmarkLatestCheckpoint(b *testing.B) {
	s, err := sqlite.OpenDir(b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		b.Fatal(err)
	}
	st := &thread.State{}
	for i := range 20 {
		st.Messages = append(st.Messages, model.Message{ID: fmt.Sprint(i), Role: model.RoleUser, Content: "message " + fmt.Sprint(i)})
	}
	for range 50 {
		if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: st}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.LatestCheckpoint(ctx, "t"); err != nil {
			b.Fatal(err)
		}
	}
}
