package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/antlerhq/antler/store"
)

// ExtensionsChannel is the notification channel announcing a new version
// of the shared extensions document (payload: the version).
const ExtensionsChannel = "antler_extensions"

// ExtensionsDoc is one stored version of extensions_config.json.
type ExtensionsDoc struct {
	Version   int64
	Doc       []byte // the file's bytes, unchanged
	SHA256    string // hex of SHA-256(Doc)
	Owner     string // the replica that stored it
	CreatedAt time.Time
}

// HashDoc is the SHA-256 of an extensions document, as stored.
func HashDoc(doc []byte) string {
	h := sha256.Sum256(doc)
	return hex.EncodeToString(h[:])
}

// PutExtensions stores doc (valid JSON) as the newest version of the
// shared extensions document, announces it on ExtensionsChannel and
// returns its version. Versions only grow; the newest one wins.
func (s *Store) PutExtensions(ctx context.Context, doc []byte, owner string) (int64, error) {
	if !json.Valid(doc) {
		return 0, errors.New("postgres: extensions document is not valid JSON")
	}
	var v int64
	err := s.pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO antler_extensions (doc, sha256, owner) VALUES ($1, $2, $3) RETURNING version),
		n AS (SELECT pg_notify($4, version::text) FROM ins)
		SELECT ins.version FROM ins, n`,
		string(doc), HashDoc(doc), owner, ExtensionsChannel).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("postgres: put extensions: %w", err)
	}
	return v, nil
}

// LatestExtensions returns the newest stored extensions document;
// store.ErrNotFound when none was stored.
func (s *Store) LatestExtensions(ctx context.Context) (*ExtensionsDoc, error) {
	var d ExtensionsDoc
	var doc string
	err := s.pool.QueryRow(ctx, `SELECT version, doc::text, sha256, owner, created_at FROM antler_extensions
		ORDER BY version DESC LIMIT 1`).Scan(&d.Version, &doc, &d.SHA256, &d.Owner, &d.CreatedAt)
	if isNoRows(err) {
		return nil, fmt.Errorf("extensions document: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: latest extensions: %w", err)
	}
	d.Doc = []byte(doc)
	return &d, nil
}

// ExtensionsVersion returns the newest version number (0 when none): a
// cheap check before each run.
func (s *Store) ExtensionsVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM antler_extensions`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: extensions version: %w", err)
	}
	return v, nil
}
