package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyDotEnv(t *testing.T) {
	dir := t.TempDir()
	src := "# keys\nOPENAI_API_KEY=sk-file\nexport TAVILY_API_KEY='tv'\nHOME_SET=from-file\nURL=\"http://${HOST_PART}/v1\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME_SET": "from-env"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	set := func(k, v string) error { env[k] = v; return nil }
	d, err := ApplyDotEnv(dir, lookup, set)
	if err != nil {
		t.Fatal(err)
	}
	want := DotEnv{Path: filepath.Join(dir, ".env"), Set: []string{"OPENAI_API_KEY", "TAVILY_API_KEY", "URL"}, Kept: []string{"HOME_SET"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("DotEnv (-want +got):\n%s", diff)
	}
	if env["HOME_SET"] != "from-env" || env["OPENAI_API_KEY"] != "sk-file" || env["TAVILY_API_KEY"] != "tv" {
		t.Errorf("environment = %v; the environment must win, the file fill the rest", env)
	}
}

func TestApplyDotEnv_none(t *testing.T) {
	set := func(string, string) error { t.Error("set called without a .env"); return nil }
	d, err := ApplyDotEnv(t.TempDir(), func(string) (string, bool) { return "", false }, set)
	if err != nil || d.Path != "" {
		t.Errorf("ApplyDotEnv without a file = %+v, %v; want nothing", d, err)
	}
}

func TestApplyDotEnv_invalidNamesTheFile(t *testing.T) {
	for name, src := range map[string]string{
		"unterminated quote": "GOOD=1\nA=\"abc\n",
		"space in a name":    "A=1\nBAD KEY=2\n",
		"no name":            "=2\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			set := func(string, string) error { t.Error("set called for a file that does not parse"); return nil }
			_, err := ApplyDotEnv(dir, func(string) (string, bool) { return "", false }, set)
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), filepath.Join(dir, ".env")) {
				t.Errorf("error = %v, want a *config.Error naming the file", err)
			}
		})
	}
}
