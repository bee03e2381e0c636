package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres/pgtest"
	"github.com/antlerhq/antler/store/storetest"
)

// safeErr is an error that says whether it happened before anything was
// sent, as pgconn's errors do.
type safeErr bool

func (e safeErr) Error() string     { return fmt.Sprintf("safe to retry: %v", bool(e)) }
func (e safeErr) SafeToRetry() bool { return bool(e) }

func pgErr(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code, Message: "test"} }

// refusedConnectError is a real *pgconn.ConnectError: a connection to a
// port nobody listens on.
func refusedConnectError(t *testing.T) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = pgconn.Connect(ctx, "postgres://u@"+addr+"/db?connect_timeout=5")
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("connect to a closed port = %v, want a ConnectError", err)
	}
	return err
}

func TestTransient_classifiesConnectionErrors(t *testing.T) {
	refused := refusedConnectError(t)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"terminated backend 57P01", fmt.Errorf("put checkpoint: %w", pgErr("57P01")), true},
		{"crash shutdown 57P02", pgErr("57P02"), true},
		{"cannot connect now 57P03", pgErr("57P03"), true},
		{"connection failure 08006", pgErr("08006"), true},
		{"connection does not exist 08003", pgErr("08003"), true},
		{"serialization failure 40001", pgErr("40001"), true},
		{"deadlock 40P01", pgErr("40P01"), true},
		{"unique violation 23505", pgErr("23505"), false},
		{"foreign key violation 23503", pgErr("23503"), false},
		{"syntax error 42601", pgErr("42601"), false},
		{"query cancelled 57014", pgErr("57014"), false},
		{"missing database 3D000", pgErr("3D000"), false},
		{"bad password 28P01", pgErr("28P01"), false},
		{"refused connection", refused, true},
		{"unexpected EOF", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"EOF", io.EOF, true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"closed network connection", fmt.Errorf("read: %w", net.ErrClosed), true},
		{"pgx conn closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), true},
		{"no live connection in the pool", fmt.Errorf("put checkpoint: %w", errors.New(poolExhausted+"; likely bug in PrepareConn, BeforeAcquire, or ShouldPing hook")), true},
		{"safe to retry", fmt.Errorf("send: %w", safeErr(true)), true},
		{"not safe to retry", safeErr(false), false},
		{"cancelled", fmt.Errorf("query: %w", context.Canceled), false},
		{"deadline", context.DeadlineExceeded, false},
		{"store not found", store.ErrNotFound, false},
		{"lease lost", ErrLeaseLost, false},
		{"other", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := transient(tc.err); got != tc.want {
				t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestRetrierDo_boundsAttempts(t *testing.T) {
	transientErr := pgErr("57P01")
	tests := []struct {
		name    string
		opts    RetryOptions
		err     error
		cancel  bool
		succeed int // the attempt that succeeds; 0: none
		want    int // attempts made
	}{
		{"default attempts on a transient error", RetryOptions{}, transientErr, false, 0, DefaultRetryAttempts},
		{"set attempts", RetryOptions{Attempts: 3}, transientErr, false, 0, 3},
		{"one attempt never retries", RetryOptions{Attempts: 1}, transientErr, false, 0, 1},
		{"success after a transient error", RetryOptions{}, transientErr, false, 2, 2},
		{"a permanent error is not retried", RetryOptions{}, pgErr("23505"), false, 0, 1},
		{"no time left", RetryOptions{MaxElapsed: time.Nanosecond}, transientErr, false, 0, 1},
		{"cancelled context", RetryOptions{}, transientErr, true, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetrier(tc.opts, slog.New(slog.DiscardHandler))
			r.base = 0
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			n := 0
			err := r.do(ctx, "test", func(context.Context, int) error {
				n++
				if n == tc.succeed {
					return nil
				}
				return tc.err
			})
			if n != tc.want {
				t.Errorf("%d attempts, want %d", n, tc.want)
			}
			if wantErr := tc.succeed == 0; (err != nil) != wantErr {
				t.Errorf("err = %v, want error %v", err, wantErr)
			}
		})
	}
}

// loseFirstAnswers opens a store in a fresh schema whose first attempt of
// every statement that succeeds reports 57P01 instead, as when the
// connection dies after the commit and before the answer; the retry must
// then find the write done and report success, not a duplicate.
func loseFirstAnswers(t *testing.T) (*Store, *atomic.Int64) {
	url, schema := pgtest.Schema(t)
	s, err := Open(t.Context(), url, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	lost := new(atomic.Int64)
	s.retry.base = 0
	s.retry.inject = func(_ string, attempt int, err error) error {
		if attempt == 1 && err == nil {
			lost.Add(1)
			return pgErr("57P01")
		}
		return err
	}
	return s, lost
}

// TestConformance_whenCommittedAnswersAreLost runs the conformance suite
// on a store that loses the answer of every first attempt that
// succeeded: every write must be idempotent under its retry.
func TestConformance_whenCommittedAnswersAreLost(t *testing.T) {
	pgtest.URL(t) // skips the whole test, not each subtest, without a database
	var lost atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		s, n := loseFirstAnswers(t)
		t.Cleanup(func() { lost.Add(n.Load()) })
		return s
	})
	t.Cleanup(func() {
		if lost.Load() == 0 {
			t.Error("no answer was lost; the test proves nothing")
		}
	})
}

// TestLeaseAcquire_whenCommittedAnswerIsLost: an Acquire whose commit
// landed but whose answer was lost holds the lease on its retry, instead
// of finding the thread busy with its own run.
func TestLeaseAcquire_whenCommittedAnswerIsLost(t *testing.T) {
	s, lost := loseFirstAnswers(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	l := NewLeases(s, LeaseOptions{Owner: "A"})
	defer l.Close()
	before := lost.Load()
	release, err := l.Acquire(ctx, "t", "r1")
	if err != nil {
		t.Fatalf("Acquire after a lost answer: %v", err)
	}
	defer release()
	if lost.Load() == before {
		t.Fatal("the Acquire's answer was not lost; the test proves nothing")
	}
	got, ok, err := l.Get(ctx, "t")
	if err != nil || !ok || got.RunID != "r1" || got.Owner != "A" {
		t.Errorf("lease = %+v %v %v, want r1 held by A", got, ok, err)
	}
}
