package sandbox

import (
	"strings"
	"testing"
)

// FuzzValidateCommand checks that the best-effort bash check never panics
// and never lets a plain host path through: a command whose only
// absolute path is /etc/<name> is always refused.
func FuzzValidateCommand(f *testing.F) {
	for _, s := range []string{"cat /etc/passwd", "cd .. && ls", "echo 'a\"b' | tee x", "x=$(cd /; ls)", "curl https://a/b",
		"ls > /dev/null 2>&1", "cd", "'unterminated", `a\`, "python3 -c \"print('/x/{id}')\""} {
		f.Add(s, "passwd")
	}
	fx := newFixture(f, fixtureOpts{hostBash: true})
	f.Fuzz(func(t *testing.T, cmd, name string) {
		_ = validateCommand(fx.layout, cmd, nil)
		_ = shellTokens(cmd)
		if name == "" || strings.ContainsAny(name, " \t\n\r\f\v\"'`;&|<>(){}$\\/") || strings.ContainsFunc(name, func(r rune) bool { return r >= 0x80 }) {
			return
		}
		if err := validateCommand(fx.layout, "cat /etc/"+name, nil); err == nil {
			t.Fatalf("cat /etc/%s was allowed", name)
		}
	})
}

// FuzzPathMatches checks the glob matcher never panics and that "**"
// matches every relative path.
func FuzzPathMatches(f *testing.F) {
	for _, s := range []string{"*.py", "src/**/*.go", "**", "a/*/c", "[", "**/**/x"} {
		f.Add(s, "src/a/b.go")
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		_ = pathMatches(pattern, rel)
		if rel != "" && !strings.HasPrefix(rel, "/") && !strings.HasSuffix(rel, "/") && !strings.Contains(rel, "//") && !pathMatches("**", rel) {
			t.Fatalf("** did not match %q", rel)
		}
	})
}
