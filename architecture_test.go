package antler_test

import (
	"go/ast"
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
	"config": 0, "model": 0, "thread": 0, "vpath": 0, "community/netguard": 0, "internal/tmpl": 0,
	"tool": 1, "store": 1, "store/cpmsg": 1, "shellcmd": 1, "telemetry": 1,
	"sandbox": 2, "community": 2, "community/browser": 2, "commandtool": 2, "mcptools": 2, "mcptools/mcpauth": 2, "mcptasks": 2, "memory": 2, "acptools": 2, "skills": 2, "skills/review": 2, "customagent": 2, "authz": 2,
	"deferred": 2, "scheduler": 2, "toolpolicy": 2, "guardrails": 2, "deferred/internal/search": 2, "store/sqlite": 2, "store/postgres": 2, "model/openai": 2, "model/anthropic": 2, "model/gemini": 2, "model/modeltest": 2, "telemetry/telemetrytest": 2,
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

// maxFuncLines is the longest a non-test function may be, counted from
// its func keyword to its closing brace.
const maxFuncLines = 80

// tableFuncs are the functions allowed to be longer than maxFuncLines
// because their body is essentially one table: a composite literal of
// data spanning all but tableSlack of their lines. Keys are "path:Name"
// for a function and "path:Recv.Name" for a method; values are the
// reason. A function that needs steps is split instead.
var tableFuncs = map[string]string{}

// tableSlack is how many lines of an exempted function may lie outside
// its table (the signature, a return, a closing brace...).
const tableSlack = 10

// pendingSplit are functions longer than maxFuncLines that are being split
// in another change; each entry goes once its function is short.
var pendingSplit = map[string]string{}

// longFunc is a function longer than maxFuncLines.
type longFunc struct {
	pos   token.Position
	name  string // as funcName gives it
	lines int
	// table is the most lines one composite literal of its body spans.
	table int
}

// longFuncs returns the functions and methods with a body in the
// module's non-test Go files (outside testdata, node_modules and hidden
// directories) that are longer than maxFuncLines, by "path:Name" or
// "path:Recv.Name".
func longFuncs(t *testing.T) map[string]longFunc {
	t.Helper()
	out := map[string]longFunc{}
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
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			pos := fset.Position(fd.Pos())
			lines := fset.Position(fd.End()).Line - pos.Line + 1
			if lines <= maxFuncLines {
				continue
			}
			pos.Filename = filepath.ToSlash(path)
			name := funcName(fd)
			out[pos.Filename+":"+name] = longFunc{pos: pos, name: name, lines: lines, table: longestLiteral(fset, fd.Body)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcName is "Name" for a function and "Recv.Name" for a method (the
// receiver's type without pointer or type parameters).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// longestLiteral returns the most lines a composite literal in body spans.
func longestLiteral(fset *token.FileSet, body *ast.BlockStmt) int {
	most := 0
	ast.Inspect(body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok {
			most = max(most, fset.Position(lit.End()).Line-fset.Position(lit.Pos()).Line+1)
		}
		return true
	})
	return most
}

// TestFunctionsStayShort fails for a non-test function or method longer
// than maxFuncLines, unless it is a table listed in tableFuncs or listed
// in pendingSplit, and for an entry of either map that no longer names a
// long function (or, in tableFuncs, names one that is not a table).
func TestFunctionsStayShort(t *testing.T) {
	long := longFuncs(t)
	for key, fn := range long {
		_, table := tableFuncs[key]
		_, pending := pendingSplit[key]
		switch {
		case table && fn.lines-fn.table > tableSlack:
			t.Errorf("%s:%d: %s is %d lines, of which only %d are one table: split it into steps and remove %q from tableFuncs",
				fn.pos.Filename, fn.pos.Line, fn.name, fn.lines, fn.table, key)
		case table, pending:
		default:
			t.Errorf("%s:%d: %s is %d lines (at most %d): split it into steps a reader can hold in mind",
				fn.pos.Filename, fn.pos.Line, fn.name, fn.lines, maxFuncLines)
		}
	}
	for _, exempt := range []map[string]string{tableFuncs, pendingSplit} {
		for key := range exempt {
			if _, ok := long[key]; !ok {
				t.Errorf("%s is exempted from TestFunctionsStayShort but is no longer a function over %d lines: remove its entry", key, maxFuncLines)
			}
		}
	}
}
