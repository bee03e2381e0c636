package antler_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/antlerhq/antler"

// packageDirs returns every directory of the module holding a non-test Go
// file, relative to the root ("." for the root), mapped to the module's
// packages it imports (relative too).
func packageDirs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		imports := out[dir]
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			switch {
			case p == modulePath:
				p = "."
			case strings.HasPrefix(p, modulePath+"/"):
				p = strings.TrimPrefix(p, modulePath+"/")
			default:
				continue
			}
			if !slices.Contains(imports, p) {
				imports = append(imports, p)
			}
		}
		out[dir] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documentedPackages returns the first column of the package table of
// docs/architecture.md.
func documentedPackages(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Packages\n")
	if !ok {
		t.Fatal("docs/architecture.md has no \"## Packages\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([^`]+)`")
	var out []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestArchitectureNamesEveryPackage fails when a package directory is
// added or removed without its line in docs/architecture.md.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	dirs := packageDirs(t)
	documented := documentedPackages(t)
	for dir := range dirs {
		if !slices.Contains(documented, dir) {
			t.Errorf("package directory %s has no line in the package table of docs/architecture.md", dir)
		}
	}
	for _, d := range documented {
		if _, ok := dirs[d]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is not a package directory", d)
		}
	}
}

// layers are the layers of docs/architecture.md; a package not listed is
// a command or a test helper, outside the layers.
var layers = map[string]int{
	"config": 0, "model": 0, "thread": 0, "vpath": 0, "community/netguard": 0,
	"tool": 1, "store": 1,
	"sandbox": 2, "community": 2, "commandtool": 2, "mcptools": 2, "acptools": 2, "skills": 2, "customagent": 2,
	"deferred": 2, "deferred/internal/search": 2, "store/sqlite": 2, "store/postgres": 2, "model/openai": 2, "model/anthropic": 2, "model/modeltest": 2,
	"toolset": 3, "builtin": 3,
	"agent": 4, "subagent": 4,
	"gateway": 5, "internal/cli": 5, ".": 5,
}

// TestArchitectureLayers fails when a layered package imports a package
// of a higher layer, or a command or test helper.
func TestArchitectureLayers(t *testing.T) {
	for dir, imports := range packageDirs(t) {
		own, layered := layers[dir]
		if !layered {
			continue
		}
		for _, imp := range imports {
			l, ok := layers[imp]
			switch {
			case !ok:
				t.Errorf("%s (layer %d) imports %s, which is outside the layers", dir, own, imp)
			case l > own:
				t.Errorf("%s (layer %d) imports %s of layer %d", dir, own, imp, l)
			}
		}
	}
}
