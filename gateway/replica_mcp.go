package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

// extSync keeps a replica's extensions_config.json and the versioned copy
// in Postgres in step, so that replicas that do not share a disk share
// their MCP configuration (and skill toggles):
//
//   - a change of the local file (the MCP or skills admin route, or an
//     operator's edit) is stored as a new version and announced with
//     NOTIFY; the admin routes publish synchronously (through the MCP
//     cache reset they call), other edits within a poll;
//   - a newer version (a NOTIFY, a poll, or the check before every run)
//     is written over the local file atomically, and the assembly of the
//     next run re-reads it (its cache notices the new content);
//   - at start, the newest stored version wins; an empty database takes
//     the local file as version 1.
//
// The newest version wins; concurrent edits on two replicas are not
// merged.
type extSync struct {
	// immutable after newExtSync
	path   string
	store  *postgres.Store
	owner  string
	poll   time.Duration
	logger *slog.Logger
	wake   chan struct{}

	mu      sync.Mutex // serialises sync passes; guards the fields below
	synced  string     // SHA-256 of the content the file and the database agree on
	version int64      // the stored version that content is ("0": not stored)
}

func newExtSync(path string, st *postgres.Store, owner string, poll time.Duration, logger *slog.Logger) *extSync {
	return &extSync{path: path, store: st, owner: owner, poll: poll, logger: logger, wake: make(chan struct{}, 1)}
}

// notify asks the loop for a pass (a NOTIFY arrived).
func (e *extSync) notify(string) {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run syncs at every wake-up and poll until ctx ends.
func (e *extSync) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(e.poll)
	defer t.Stop()
	for {
		if err := e.sync(ctx); err != nil && ctx.Err() == nil {
			e.logger.Error("cannot sync the extensions config with the database", "path", e.path, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-t.C:
		}
	}
}

// sync makes one pass: publish a local change, then pull a newer stored
// version.
func (e *extSync) sync(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	local, err := os.ReadFile(e.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	latest, err := e.store.LatestExtensions(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	localHash := ""
	if local != nil {
		localHash = postgres.HashDoc(local)
	}
	switch {
	case latest != nil && localHash == latest.SHA256:
		// The file already holds the newest version (at start, or a file
		// shared with the replica that stored it).
		e.synced, e.version = latest.SHA256, latest.Version
		return nil
	case local != nil && localHash != e.synced && (e.synced != "" || latest == nil):
		// The file changed here (or the database has nothing yet): a new
		// version, newer than any stored.
		return e.publish(ctx, local)
	case latest == nil || latest.SHA256 == e.synced || latest.Version < e.version:
		return nil
	}
	if err := config.WriteFileAtomic(e.path, latest.Doc, 0o644); err != nil {
		return err
	}
	e.synced, e.version = latest.SHA256, latest.Version
	e.logger.Info("extensions config updated from the database", "version", latest.Version, "by", latest.Owner)
	return nil
}

// publish stores local as a new version; content that is not JSON (an
// edit in progress) is left alone until it is.
func (e *extSync) publish(ctx context.Context, local []byte) error {
	if !json.Valid(local) {
		return nil
	}
	v, err := e.store.PutExtensions(ctx, local, e.owner)
	if err != nil {
		return err
	}
	e.synced, e.version = postgres.HashDoc(local), v
	e.logger.Info("extensions config stored in the database", "version", v)
	return nil
}

// beforeRun pulls a newer stored version, if any, before a run assembles
// its tools: one cheap query, so that a change made through any replica
// is used by the next run on every replica.
func (e *extSync) beforeRun(ctx context.Context) {
	v, err := e.store.ExtensionsVersion(ctx)
	e.mu.Lock()
	stale := err == nil && v > e.version
	e.mu.Unlock()
	if err != nil {
		e.logger.Warn("cannot check the extensions config version", "err", err)
		return
	}
	if stale {
		if err := e.sync(ctx); err != nil {
			e.logger.Error("cannot sync the extensions config with the database", "err", err)
		}
	}
}

// publishingResetter is the CacheResetter the gateway's admin routes call
// after writing the extensions file: it stores the change before the
// route answers, then resets the MCP cache.
type publishingResetter struct {
	ext  *extSync
	next CacheResetter
}

// Reset implements CacheResetter.
func (p publishingResetter) Reset() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.ext.sync(ctx); err != nil {
		p.ext.logger.Error("cannot store the extensions config in the database", "err", err)
	}
	if p.next != nil {
		p.next.Reset()
	}
}
