package config

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// writeAt writes data to path and sets its mtime.
func writeAt(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func mustSig(t *testing.T, path string) Signature {
	t.Helper()
	s, _, err := readSignature(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignature_changesWithSizeMtimeHashOrPath checks that a file's
// signature differs when its size, mtime, content hash or path changed
// since it was read, as DeerFlow's MCP cache decides (a deleted file is
// Missing, which the cache treats apart).
func TestSignature_changesWithSizeMtimeHashOrPath(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		change func(t *testing.T, path, other string) string // returns the path to check now
		want   bool
	}{
		{"unchanged", func(t *testing.T, path, _ string) string { return path }, false},
		{"rewritten identically", func(t *testing.T, path, _ string) string {
			writeAt(t, path, `{"a": 1}`, base)
			return path
		}, false},
		{"same-mtime content change", func(t *testing.T, path, _ string) string {
			writeAt(t, path, `{"b": 2}`, base) // same size, same mtime
			return path
		}, true},
		{"backward mtime", func(t *testing.T, path, _ string) string {
			writeAt(t, path, `{"a": 1}`, base.Add(-time.Hour))
			return path
		}, true},
		{"same-size swap", func(t *testing.T, path, _ string) string {
			writeAt(t, path, `{"a": 2}`, base.Add(time.Second))
			return path
		}, true},
		{"path switch", func(t *testing.T, _, other string) string {
			writeAt(t, other, `{"a": 1}`, base)
			return other
		}, true},
		{"deleted", func(t *testing.T, path, _ string) string {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			return path
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "extensions_config.json")
			writeAt(t, path, `{"a": 1}`, base)
			recorded := mustSig(t, path)
			current := mustSig(t, tt.change(t, path, filepath.Join(dir, "other.json")))
			if got := !recorded.Equal(current); got != tt.want {
				t.Errorf("changed = %v, want %v\nrecorded %+v\ncurrent  %+v", got, tt.want, recorded, current)
			}
		})
	}
}

func TestReadSignature_missingFileIsNoError(t *testing.T) {
	s, _, err := readSignature(filepath.Join(t.TempDir(), "nope.json"))
	if err != nil || !s.Missing || !filepath.IsAbs(s.Path) {
		t.Errorf("readSignature(missing) = %+v, %v", s, err)
	}
}

func TestExtensionsCache(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dir := t.TempDir()
	path := filepath.Join(dir, "extensions_config.json")
	c := NewExtensionsCache(path)

	if _, _, err := c.Get(); err == nil {
		t.Fatal("Get on a never-existing file succeeded")
	}

	step := func(name string, wantChanged bool, wantParses int, wantCommand string, wantErr bool) {
		t.Helper()
		e, changed, err := c.Get()
		if (err != nil) != wantErr {
			t.Errorf("%s: err = %v, want error %v", name, err, wantErr)
		}
		if changed != wantChanged {
			t.Errorf("%s: changed = %v, want %v", name, changed, wantChanged)
		}
		if got := c.Parses(); got != wantParses {
			t.Errorf("%s: Parses = %d, want %d", name, got, wantParses)
		}
		if e == nil {
			t.Fatalf("%s: nil extensions", name)
		}
		if got := e.MCPServers["s"].Command; got != wantCommand {
			t.Errorf("%s: command = %q, want %q", name, got, wantCommand)
		}
	}

	writeAt(t, path, `{"mcpServers": {"s": {"command": "aaa"}}}`, base)
	step("first load", true, 1, "aaa", false)
	step("unchanged", false, 1, "aaa", false)
	step("unchanged again", false, 1, "aaa", false)

	writeAt(t, path, `{"mcpServers": {"s": {"command": "bbb"}}}`, base) // same mtime and size
	step("same-mtime content change", true, 2, "bbb", false)

	writeAt(t, path, `{"mcpServers": {"s": {"command": "ccc"}}}`, base.Add(-time.Hour))
	step("backward mtime", true, 3, "ccc", false)

	writeAt(t, path, `{"mcpServers": {"s": {"command": "ccc"}}`, base) // broken JSON
	step("broken keeps last good", false, 4, "ccc", true)
	step("broken not re-parsed", false, 4, "ccc", true)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	step("deleted keeps last good", false, 4, "ccc", false)

	writeAt(t, path, `{"mcpServers": {"s": {"command": "ddd"}}}`, base)
	step("recreated", true, 5, "ddd", false)

	c.Reset()
	step("after reset", true, 6, "ddd", false)
}

func TestExtensionsCacheConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "extensions_config.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewExtensionsCache(path)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, _, err := c.Get(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := c.Parses(); got != 1 {
		t.Errorf("Parses = %d, want 1", got)
	}
}

func TestExtensionsCacheEmptyPath(t *testing.T) {
	e, changed, err := NewExtensionsCache("").Get()
	if err != nil || changed || len(e.MCPServers) != 0 {
		t.Errorf("Get = %+v, %v, %v", e, changed, err)
	}
}
