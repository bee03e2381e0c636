package postgres

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of RetryOptions.
const (
	DefaultRetryAttempts   = 6
	DefaultRetryMaxElapsed = 10 * time.Second
)

// The backoff between attempts: retryBaseDelay after the first failure,
// doubling up to retryMaxDelay, each wait drawn at random from its upper
// half so that replicas that lost their connections together do not
// reconnect in step. With the default 6 attempts the waits add up to at
// most 1.55 s.
const (
	retryBaseDelay = 50 * time.Millisecond
	retryMaxDelay  = time.Second
)

// RetryOptions bound how a statement that failed on a transient
// connection error (see transient) is tried again. Only statements that
// are idempotent, or made so, are retried; docs/design.md lists them. The
// zero value is the default.
type RetryOptions struct {
	// Attempts is the most times a statement is tried, the first
	// included; 0 means DefaultRetryAttempts, 1 never retries.
	Attempts int
	// MaxElapsed is how long after the first attempt a new attempt may
	// still start; 0 means DefaultRetryMaxElapsed. The caller's context
	// bounds the whole as well.
	MaxElapsed time.Duration
}

// retrier runs statements with the retry policy. It is immutable.
type retrier struct {
	attempts   int
	maxElapsed time.Duration
	base       time.Duration // the first wait: retryBaseDelay
	logger     *slog.Logger
	// inject, in tests only, replaces the error of each attempt (to
	// lose the answer of a write that committed); nil in production.
	inject func(op string, attempt int, err error) error
}

func newRetrier(o RetryOptions, logger *slog.Logger) retrier {
	return retrier{attempts: max(cmp.Or(o.Attempts, DefaultRetryAttempts), 1),
		maxElapsed: cmp.Or(o.MaxElapsed, DefaultRetryMaxElapsed), base: retryBaseDelay, logger: logger}
}

// do calls fn (with the attempt number, from 1) until it succeeds, fails
// with an error that is not transient, or the attempts, MaxElapsed or ctx
// run out; it returns fn's last error. fn must be safe to repeat after an
// attempt whose outcome is unknown (the connection died after the
// statement was sent, so it may have committed).
func (r retrier) do(ctx context.Context, op string, fn func(ctx context.Context, attempt int) error) error {
	start := time.Now()
	delay := r.base
	retryCtx := context.WithValue(ctx, retryingKey{}, true)
	for attempt := 1; ; attempt++ {
		actx := ctx
		if attempt > 1 {
			actx = retryCtx
		}
		err := fn(actx, attempt)
		if r.inject != nil {
			err = r.inject(op, attempt, err)
		}
		if err == nil || !transient(err) || attempt >= r.attempts || ctx.Err() != nil {
			return err
		}
		wait := delay/2 + rand.N(delay/2+1)
		if time.Since(start)+wait > r.maxElapsed {
			return err
		}
		r.logger.Warn("postgres: transient error; retrying", "op", op, "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, retryMaxDelay)
	}
}

// retryingKey marks the context of a retry: the pool pings the idle
// connection it hands out first (shouldPing), since the failure that
// caused the retry (a restarted server, terminated backends) has likely
// killed the pool's other idle connections too, and each dead one would
// otherwise cost an attempt.
type retryingKey struct{}

// shouldPing is the pool's ShouldPing: pgx's default (a connection idle
// for more than a second) and every connection handed to a retry.
func shouldPing(ctx context.Context, p pgxpool.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || ctx.Value(retryingKey{}) != nil
}

// transient reports whether err is a connection failure after which the
// same statement may succeed on another connection:
//
//   - errors the server sent: class 08 (connection exception), 57P01
//     admin_shutdown (pg_terminate_backend, a fast shutdown), 57P02
//     crash_shutdown, 57P03 cannot_connect_now (starting up or in
//     recovery), and 40001 serialization_failure / 40P01
//     deadlock_detected (the transaction was rolled back whole). Every
//     other server error (constraint violations, syntax, permissions,
//     a missing database) is an answer that a retry would repeat;
//   - errors before anything was sent (pgconn.SafeToRetry) and failures
//     to connect (*pgconn.ConnectError without a server error);
//   - the connection breaking: EOF, a reset or refused connection, a
//     closed network connection, pgx's "conn closed", and pgxpool
//     finding no live connection to hand out.
//
// The caller's cancellation and deadlines, and timeouts, are never
// transient.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "40001", "40P01":
			return true
		}
		return strings.HasPrefix(pe.Code, "08")
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, pgconn.ErrConnClosed,
		syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	// pgxpool's Acquire gives up after every connection it tried failed
	// its ping; nothing was sent. It has no sentinel error to test.
	return strings.Contains(err.Error(), poolExhausted)
}

// poolExhausted is the text of pgxpool's error when Acquire found no live
// connection.
const poolExhausted = "pgxpool: too many failed attempts acquiring connection"
