package shellcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// render shows a command as its words joined by spaces, "!" before a
// Dynamic one, "$" before one inside a substitution and "<wrapper>" after.
func render(l Line) []string {
	var out []string
	for _, c := range l.Commands {
		s := strings.Join(c.Words, " ")
		if c.Dynamic {
			s = "!" + s
		}
		if c.InSubstitution {
			s = "$" + s
		}
		if c.Wrapper != "" {
			s += " <" + c.Wrapper + ">"
		}
		out = append(out, s)
	}
	return out
}

func TestParse_findsEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"plain", "ls -la", []string{"ls -la"}},
		{"semicolon", "a; rm -rf b", []string{"a", "rm -rf b"}},
		{"and or", "a && rm -rf b || c", []string{"a", "rm -rf b", "c"}},
		{"pipe", "cat x | grep y |& tee z", []string{"cat x", "grep y", "tee z"}},
		{"newline", "a\nrm -rf b", []string{"a", "rm -rf b"}},
		{"subshell and group", "(rm -rf b); { rm c; }", []string{"rm -rf b", "rm c"}},
		{"command substitution", "echo $(rm -rf b)", []string{"echo $(rm -rf b)", "$rm -rf b"}},
		{"backticks", "echo `rm -rf b`", []string{"echo `rm -rf b`", "$rm -rf b"}},
		{"substitution in quotes", `echo "x $(rm -rf b) y"`, []string{`echo "x $(rm -rf b) y"`, "$rm -rf b"}},
		{"process substitution", "diff <(rm -rf b) x", []string{"diff <(rm -rf b) x", "$rm -rf b"}},
		{"here-string", "cat <<< $(rm -rf b)", []string{"cat", "$rm -rf b"}},
		{"here-document", "cat <<EOF\n$(rm -rf b)\nEOF", []string{"cat", "$rm -rf b"}},
		{"assignment value", "X=$(rm -rf b)", []string{"$rm -rf b"}},
		{"export", "export X=$(rm -rf b)", []string{"export X=$(rm -rf b)", "$rm -rf b"}},
		{"if and loop", "if true; then rm a; fi; for f in *; do rm $f; done", []string{"true", "rm a", "rm $f"}},
		{"function body", "f() { rm -rf b; }; f", []string{"rm -rf b", "f"}},
		{"empty quotes", "r''m -rf b", []string{"rm -rf b"}},
		{"double quotes", `"rm" -rf b`, []string{"rm -rf b"}},
		{"backslash", `\rm -rf b`, []string{"rm -rf b"}},
		{"env prefix", "FOO=1 rm -rf b", []string{"rm -rf b"}},
		{"variable name", "$X -rf b", []string{"!$X -rf b"}},
		{"substitution name", `"$(echo rm)" -rf b`, []string{`!"$(echo rm)" -rf b`, "$echo rm"}},
		{"glob name", "/bin/r? -rf b", []string{"!/bin/r? -rf b"}},
		{"brace name", "{rm,x} -rf b", []string{"!{rm,x} -rf b"}},
		{"comment", "# rm -rf b", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse(tc.line)
			if l.Err != nil {
				t.Fatalf("Parse: %v", l.Err)
			}
			if diff := cmp.Diff(tc.want, render(l)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse_unwrapsWrappers(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"sudo", "sudo -u root rm -rf b", []string{"sudo -u root rm -rf b", "rm -rf b <sudo>"}},
		{"env", "env -i FOO=1 rm b", []string{"env -i FOO=1 rm b", "rm b <env>"}},
		{"env dash", "env - PATH=/bin rm b", []string{"env - PATH=/bin rm b", "rm b <env>"}},
		{"env split string", "env -S 'rm -rf b'", []string{"env -S rm -rf b", "rm -rf b <env -S>"}},
		{"command", "command rm b", []string{"command rm b", "rm b <command>"}},
		{"nice nohup timeout", "nice -n 5 nohup timeout -s KILL 10 rm b", []string{
			"nice -n 5 nohup timeout -s KILL 10 rm b", "nohup timeout -s KILL 10 rm b <nice>",
			"timeout -s KILL 10 rm b <nohup>", "rm b <timeout>"}},
		{"xargs", "echo b | xargs -I {} rm -rf {}", []string{"echo b", "xargs -I {} rm -rf {}", "rm -rf {} <xargs>"}},
		{"find exec", `find . -name x -exec rm {} \; -execdir sh -c 'rm y' +`, []string{
			"find . -name x -exec rm {} ; -execdir sh -c rm y +", "rm {} <find>", "sh -c rm y <find>", "rm y <sh -c>"}},
		{"busybox", "busybox rm b", []string{"busybox rm b", "rm b <busybox>"}},
		{"watch", "watch -n 1 rm b", []string{"watch -n 1 rm b", "rm b <watch>"}},
		{"alias", "alias x='rm -rf'; x b", []string{"alias x=rm -rf", "rm -rf <alias>", "x b"}},
		{"path of wrapper", "/usr/bin/sudo rm b", []string{"/usr/bin/sudo rm b", "rm b <sudo>"}},
		{"bash -c", "bash -c 'rm -rf b'", []string{"bash -c rm -rf b", "rm -rf b <bash -c>"}},
		{"sh -ec nested", `sh -ec "bash -c 'rm -rf b'"`, []string{"sh -ec bash -c 'rm -rf b'", "bash -c rm -rf b <sh -c>", "rm -rf b <bash -c>"}},
		{"eval", "eval rm -rf b", []string{"eval rm -rf b", "rm -rf b <eval>"}},
		{"eval of variable", "eval $CMD", []string{"eval $CMD", "!eval $CMD <eval>"}},
		{"pipe to shell", "echo 'rm -rf b' | sh", []string{"echo rm -rf b", "sh", "!sh <sh>"}},
		{"shell script file", "bash run.sh", []string{"bash run.sh", "!bash run.sh <bash>"}},
		{"source", ". ./env.sh", []string{". ./env.sh", "!. ./env.sh <.>"}},
		{"sudo variable", "sudo $X b", []string{"sudo $X b", "!$X b <sudo>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse(tc.line)
			if l.Err != nil {
				t.Fatalf("Parse: %v", l.Err)
			}
			if diff := cmp.Diff(tc.want, render(l)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse_marksLiteralWords(t *testing.T) {
	l := Parse(`rm -rf "$HOME" 'a b' x$(y) ~`)
	if len(l.Commands) == 0 {
		t.Fatal("no command")
	}
	if diff := cmp.Diff([]bool{true, true, false, true, false, true}, l.Commands[0].Literal); diff != "" {
		t.Errorf("literal (-want +got):\n%s", diff)
	}
}

func TestParse_limits(t *testing.T) {
	if l := Parse("echo 'unterminated"); l.Err == nil {
		t.Error("an unterminated quote parsed")
	}
	if l := Parse(strings.Repeat("a", maxScriptBytes+1)); l.Err != ErrTooLarge {
		t.Errorf("an oversized line: err %v", l.Err)
	}
	if l := Parse(strings.Repeat("a;", maxCommands+1)); l.Err != ErrTooLarge || len(l.Commands) != maxCommands {
		t.Errorf("too many commands: err %v, %d commands", l.Err, len(l.Commands))
	}
	deep := "rm b"
	for range maxDepth + 1 {
		deep = "eval " + strings.ReplaceAll(deep, " ", `\ `)
	}
	l := Parse(deep)
	if last := l.Commands[len(l.Commands)-1]; !last.Dynamic {
		t.Errorf("a string nested beyond MaxDepth was parsed: %v", render(l))
	}
}

// FuzzParse checks that no line panics the parser and that a literal
// command behind a separator is always found.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a; b", "$(x)", "`x`", "bash -c 'x'", "eval x", "'unterminated", "find -exec", "env -S", "sudo", "a <<EOF\nb\nEOF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l := Parse(line)
		if len(l.Commands) > maxCommands {
			t.Fatalf("%d commands", len(l.Commands))
		}
		for _, c := range l.Commands {
			if len(c.Literal) != len(c.Words) {
				t.Fatalf("%q: %d words, %d literal flags", line, len(c.Words), len(c.Literal))
			}
		}
		if l.Err != nil || strings.ContainsAny(line, "\\\"'`#\n\r<>(){}$") || strings.Count(line, ";") > 0 {
			return
		}
		l = Parse(line + "; rmx")
		if l.Err == nil && (len(l.Commands) == 0 || l.Commands[len(l.Commands)-1].Name() != "rmx") {
			t.Fatalf("%q; rmx: %v", line, render(l))
		}
	})
}
