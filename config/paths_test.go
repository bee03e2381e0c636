package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePaths(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	withExt := filepath.Join(dir, "with")
	if err := os.MkdirAll(withExt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withExt, "extensions_config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name           string
		cfg, ext, home string
		env            map[string]string
		want           Paths
	}{
		{
			name: "defaults",
			want: Paths{Config: filepath.Join(cwd, "config.yaml"), Home: filepath.Join(cwd, ".antler")},
		},
		{
			name: "flags win",
			cfg:  "/a/c.yaml", ext: "/a/e.json", home: "/a/home",
			env:  map[string]string{"ANTLER_CONFIG": "/b/c.yaml", "ANTLER_EXTENSIONS_CONFIG": "/b/e.json", "ANTLER_HOME": "/b/home"},
			want: Paths{Config: "/a/c.yaml", Extensions: "/a/e.json", Home: "/a/home"},
		},
		{
			name: "antler env before deerflow env",
			env: map[string]string{
				"ANTLER_CONFIG": "/b/c.yaml", "DEER_FLOW_CONFIG_PATH": "/d/c.yaml",
				"ANTLER_EXTENSIONS_CONFIG": "/b/e.json", "DEER_FLOW_EXTENSIONS_CONFIG_PATH": "/d/e.json",
				"ANTLER_HOME": "/b/home",
			},
			want: Paths{Config: "/b/c.yaml", Extensions: "/b/e.json", Home: "/b/home"},
		},
		{
			name: "deerflow env",
			env:  map[string]string{"DEER_FLOW_CONFIG_PATH": "/d/c.yaml", "DEER_FLOW_EXTENSIONS_CONFIG_PATH": "/d/e.json"},
			want: Paths{Config: "/d/c.yaml", Extensions: "/d/e.json", Home: filepath.Join(cwd, ".antler")},
		},
		{
			name: "extensions beside config",
			cfg:  filepath.Join(withExt, "config.yaml"),
			want: Paths{Config: filepath.Join(withExt, "config.yaml"), Extensions: filepath.Join(withExt, "extensions_config.json"), Home: filepath.Join(cwd, ".antler")},
		},
		{
			name: "no extensions beside config",
			cfg:  filepath.Join(dir, "config.yaml"),
			want: Paths{Config: filepath.Join(dir, "config.yaml"), Home: filepath.Join(cwd, ".antler")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePaths(tt.cfg, tt.ext, tt.home, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolvePaths (-want +got):\n%s", diff)
			}
		})
	}
}
