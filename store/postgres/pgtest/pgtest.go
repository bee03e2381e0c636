// Package pgtest gives tests a private PostgreSQL schema (or database). Tests that need
// PostgreSQL read the server from ANTLER_TEST_POSTGRES_URL (CI sets
// postgres://postgres@127.0.0.1:5432/test) and are skipped without it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
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

// Database creates a private database on the test server for a test that
// disturbs the whole database (terminating its connections, for one), and
// returns its URL and name. It is dropped when the test ends (WITH
// (FORCE): connections still open are terminated first).
func Database(t testing.TB) (dbURL, name string) {
	t.Helper()
	server := URL(t)
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" {
		t.Fatalf("pgtest: %s must be a postgres:// URL to name another database on its server", EnvURL)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name = "antler_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String(), name
}
