package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/store"
)

// crash leaves s as a killed process leaves it: its connections and its
// lock are gone (the kernel drops them), its owner file stays.
func crash(t *testing.T, s *Store) {
	t.Helper()
	for _, st := range []interface{ Close() error }{s.touchThread, s.insertCheckpoint, s.insertMessage, s.parentRow, s.reader, s.writer, s.owner.f} {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// startRun records a running run of thread tid in s and marks the thread
// busy, as the agent does.
func startRun(t *testing.T, s *Store, tid, rid string) {
	t.Helper()
	ctx := t.Context()
	th, err := s.GetThread(ctx, tid)
	if err != nil {
		th = &store.Thread{ID: tid, UserID: "u"}
		if err := s.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateRun(ctx, &store.Run{ID: rid, ThreadID: tid, UserID: "u", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	th.Status = store.ThreadBusy
	if err := s.UpdateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
}

func wantRun(t *testing.T, s *Store, id, status, errText string) {
	t.Helper()
	r, err := s.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != status || r.Error != errText {
		t.Errorf("run %s: status %q error %q, want %q %q", id, r.Status, r.Error, status, errText)
	}
}

func wantThread(t *testing.T, s *Store, id, status string) {
	t.Helper()
	th, err := s.GetThread(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != status {
		t.Errorf("thread %s: status %q, want %q", id, th.Status, status)
	}
}

// TestOpen_recordsRunsOfStoppedProcessesAsFailed: processes A and B share
// a database. B's Open leaves A's running run alone while A lives; after
// A is killed, the next Open records A's run as failed (StoppedRunError)
// and frees its thread, leaves B's run alone, and gives threads left busy
// by A after their run ended the status of that run's outcome. B's runs
// are recovered once B has closed the database.
func TestOpen_recordsRunsOfStoppedProcessesAsFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	ctx := t.Context()
	a, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, a, "t-a", "r-a")
	// Threads whose run ended, but whose status A never wrote.
	for tid, status := range map[string]string{"t-done": store.RunSuccess, "t-asked": store.RunInterrupted} {
		startRun(t, a, tid, "r-"+tid)
		if err := a.UpdateRun(ctx, "r-"+tid, store.RunUpdate{Status: status}); err != nil {
			t.Fatal(err)
		}
	}

	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	startRun(t, b, "t-b", "r-b")
	wantRun(t, b, "r-a", store.RunRunning, "") // A is alive
	wantThread(t, b, "t-a", store.ThreadBusy)

	crash(t, a)
	lock := a.owner.path
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the killed process's owner file: %v", err)
	}
	c, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wantRun(t, c, "r-a", store.RunError, StoppedRunError)
	wantThread(t, c, "t-a", store.ThreadError)
	wantThread(t, c, "t-done", store.ThreadIdle)
	wantThread(t, c, "t-asked", store.ThreadInterrupted)
	wantRun(t, c, "r-b", store.RunRunning, "") // B is alive
	wantThread(t, c, "t-b", store.ThreadBusy)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the killed process's owner file is still there: %v", err)
	}
	if r, err := c.GetRun(ctx, "r-a"); err != nil || r.StopReason != "error" {
		t.Errorf("recovered run's stop reason = %+v, %v", r, err)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	wantRun(t, d, "r-b", store.RunError, StoppedRunError)
	wantThread(t, d, "t-b", store.ThreadError)
}

// TestOpen_ownRunsAreNotRecovered: a store never fails the runs of its
// own process, and a second store of the same process counts as alive.
func TestOpen_ownRunsAreNotRecovered(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	a, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	startRun(t, a, "t", "r")
	if err := a.recoverRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wantRun(t, b, "r", store.RunRunning, "")
	wantThread(t, b, "t", store.ThreadBusy)
}
