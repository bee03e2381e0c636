package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Several processes may open one database (antler serve, and antler run
// or chat beside it): SQLite's own locks serialise their writes. Each
// process owns the runs it records: Open claims an owner id, holds an
// exclusive lock (flock) on the file <database>-owners/<id>.lock until
// Close, and CreateRun writes the id in the run's row. The kernel drops
// the lock when the process ends, however it ends (SIGKILL, a crash), so
// a lock file that can be locked belongs to a process that is gone.
//
// Recovery on Open, before the store is returned (so before a server
// built on it answers a request): every run that is pending or running
// and whose owner is gone is recorded as failed (status error, stop
// reason error, StoppedRunError), and every thread left busy without a
// pending or running run is freed, with the status its latest run's
// outcome gives (error, interrupted, else idle). The runs of a live
// process are left alone.

// StoppedRunError is the error text of a run that was still pending or
// running when the process running it stopped (killed, crashed, lost
// power): the next process to open the database records the run as
// failed with it.
const StoppedRunError = "the Antler process running this run stopped before the run ended (recorded when the database was next opened)"

// ownersSuffix names the directory of owner lock files beside the
// database file.
const ownersSuffix = "-owners"

// owner is this process's claim on the runs it records.
type owner struct {
	id   string
	path string
	f    *os.File
}

// claimOwner creates and locks a new owner file in dir.
func claimOwner(dir string) (*owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create owners directory: %w", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	path := filepath.Join(dir, id+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create owner lock: %w", err)
	}
	locked, err := tryLock(f)
	if err == nil && canLock && !locked {
		err = errors.New("held by another process")
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	fmt.Fprintf(f, "pid %d on %s\n", os.Getpid(), host) // for operators
	return &owner{id: id, path: path, f: f}, nil
}

// release removes the owner file, then drops the lock (a process probing
// it meanwhile finds the owner gone, as it is). Where an open file cannot
// be removed, it is removed after closing.
func (o *owner) release() error {
	rmErr := os.Remove(o.path)
	closeErr := o.f.Close()
	if rmErr != nil {
		rmErr = os.Remove(o.path)
	}
	return errors.Join(rmErr, closeErr)
}

// ownerGone reports whether the process that claimed id has ended: its
// lock file is missing, or can be locked (then it is removed). "" (a run
// recorded before owners were) is gone. Any doubt keeps the owner alive:
// a live run is never failed.
func ownerGone(dir, id string) bool {
	if id == "" {
		return true
	}
	if !canLock || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return false
	}
	path := filepath.Join(dir, id+".lock")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	locked, err := tryLock(f)
	if err != nil || !locked {
		return false
	}
	os.Remove(path)
	return true
}

// recoverRuns fails the pending and running runs of owners that are gone
// and frees the threads they left busy, in one write transaction.
func (s *Store) recoverRuns(ctx context.Context) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: recover runs: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT owner FROM runs WHERE status IN ('pending', 'running') AND owner <> ?`, s.owner.id)
	if err != nil {
		return fmt.Errorf("sqlite: recover runs: %w", err)
	}
	var owners []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: recover runs: %w", err)
		}
		owners = append(owners, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: recover runs: %w", err)
	}
	at := toNanos(now())
	var runs, threads int64
	for _, o := range owners {
		if !ownerGone(s.ownersDir, o) {
			continue
		}
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'error', stop_reason = 'error', error = ?, updated_at = ?
			WHERE owner = ? AND status IN ('pending', 'running')`, StoppedRunError, at, o)
		if err != nil {
			return fmt.Errorf("sqlite: recover runs: %w", err)
		}
		n, _ := res.RowsAffected()
		runs += n
	}
	res, err := tx.ExecContext(ctx, freeThreads, at)
	if err != nil {
		return fmt.Errorf("sqlite: recover runs: %w", err)
	}
	threads, _ = res.RowsAffected()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: recover runs: %w", err)
	}
	if runs > 0 || threads > 0 {
		s.logger.Warn("runs of stopped processes recorded as failed", "path", s.path, "runs", runs, "threads_freed", threads)
	}
	return nil
}

// freeThreads gives every thread that is busy without a pending or
// running run the status of its latest run's outcome. A live process
// marks a thread busy only after recording its run as running, so such a
// thread was left by a process that stopped.
const freeThreads = `UPDATE threads SET updated_at = ?, status = CASE
		(SELECT status FROM runs WHERE runs.thread_id = threads.id ORDER BY created_at DESC, rowid DESC LIMIT 1)
		WHEN 'error' THEN 'error' WHEN 'interrupted' THEN 'interrupted' ELSE 'idle' END
	WHERE status = 'busy'
	  AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.thread_id = threads.id AND runs.status IN ('pending', 'running'))`
