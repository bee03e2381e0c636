// Package pgtest gives tests a private PostgreSQL schema. Tests that need
// PostgreSQL read the server from ANTLER_TEST_POSTGRES_URL (CI sets
// postgres://postgres@127.0.0.1:5432/test) and are skipped without it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the environment variable naming the test server.
const EnvURL = "ANTLER_TEST_POSTGRES_URL"

// URL returns the test server's URL, or skips the test when EnvURL is not
// set.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (for example postgres://postgres@127.0.0.1:5432/test)", EnvURL)
	}
	return u
}

// Schema returns the URL of the test server and the name of a fresh
// schema unique to this test (not created yet: Open creates it), dropped
// with everything in it when the test ends. Parallel test packages each
// get their own.
func Schema(t testing.TB) (url, schema string) {
	t.Helper()
	url = URL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.ToLower(t.Name())
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	if len(name) > 30 { // identifiers are at most 63 bytes
		name = name[:30]
	}
	schema = "antler_test_" + name + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}
