package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// extensionsWith is an extensions file naming one stdio server whose
// command is cmd.
func extensionsWith(cmd string) []byte {
	return []byte(`{"mcpServers":{"s":{"type":"stdio","command":"` + cmd + `"}}}`)
}

// settledCache returns a cache of a new file holding data whose clock
// runs an hour ahead, so that the file's changes count as settled.
func settledCache(t *testing.T, data []byte) (*ExtensionsCache, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "extensions_config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := NewExtensionsCache(path)
	c.now = func() time.Time { return time.Now().Add(time.Hour) }
	return c, path
}

func command(t *testing.T, c *ExtensionsCache) string {
	t.Helper()
	ext, _, err := c.Get()
	if err != nil {
		t.Fatal(err)
	}
	return ext.MCPServers["s"].Command
}

func TestExtensionsCache_unchangedFileReadOnce(t *testing.T) {
	c, _ := settledCache(t, extensionsWith("aaaa"))
	for range 10 {
		if got := command(t, c); got != "aaaa" {
			t.Fatalf("command %q, want aaaa", got)
		}
	}
	if r, p := c.Reads(), c.Parses(); r != 1 || p != 1 {
		t.Errorf("ten checks of an unchanged file: %d reads, %d parses; want 1, 1", r, p)
	}
}

func TestExtensionsCache_changeSeenThroughStamp(t *testing.T) {
	cases := []struct {
		name  string
		write func(t *testing.T, path string, data []byte)
	}{
		{"replaced by rename, same size and modification time", func(t *testing.T, path string, data []byte) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tmp := path + ".tmp"
			if err := os.WriteFile(tmp, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten in place, longer", func(t *testing.T, path string, data []byte) {
			if err := os.WriteFile(path, append(data, ' '), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, path := settledCache(t, extensionsWith("aaaa"))
			command(t, c)
			tc.write(t, path, extensionsWith("bbbb"))
			if got := command(t, c); got != "bbbb" {
				t.Errorf("after the change: command %q, want bbbb", got)
			}
			if r := c.Reads(); r != 2 {
				t.Errorf("reads %d, want 2", r)
			}
		})
	}
}

// TestExtensionsCache_racyFileHashedAgain checks that a file changed
// within settleTime of its read is read and hashed at every check: a
// write in the same clock tick could leave its stamp unchanged.
func TestExtensionsCache_racyFileHashedAgain(t *testing.T) {
	c, path := settledCache(t, extensionsWith("aaaa"))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return fi.ModTime() } // read in the tick of the last write
	command(t, c)
	command(t, c)
	if r, p := c.Reads(), c.Parses(); r != 2 || p != 1 {
		t.Errorf("two checks of a file read in the tick of its last write: %d reads, %d parses; want 2, 1", r, p)
	}
}

// BenchmarkExtensionsCacheGet is one check of an unchanged extensions
// file (DeerFlow's example file, 1.9 KB): stamped is Get, which stats it;
// rehash is the check before the stamp, which read and hashed the file
// at every Get.
func BenchmarkExtensionsCacheGet(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "extensions_config.example.json"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "extensions_config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("stamped", func(b *testing.B) {
		c := NewExtensionsCache(path)
		c.now = func() time.Time { return time.Now().Add(time.Hour) }
		if _, _, err := c.Get(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, changed, err := c.Get(); err != nil || changed {
				b.Fatal(err, changed)
			}
		}
		if c.Reads() != 1 {
			b.Fatalf("%d reads", c.Reads())
		}
	})
	b.Run("rehash", func(b *testing.B) {
		last, _, err := readSignature(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			sig, _, err := readSignature(path)
			if err != nil || !sig.Equal(last) {
				b.Fatal(err)
			}
		}
	})
}
