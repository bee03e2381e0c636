package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/google/go-cmp/cmp"
)

// Through the tools: host paths in output are
// masked to virtual ones, including the bare base at the end of output,
// and Windows-style separators reach the same file.
func TestToolsMapAndMaskPaths(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true})
	tp := f.paths(t, "u1", "t1")
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "a.txt"), []byte("hello\n"), 0o644))
	if got := f.text(t, "u1", "t1", "read_file", map[string]any{"path": `\mnt\user-data\workspace\a.txt`}); got != "hello\n" {
		t.Errorf("read with backslashes = %q", got)
	}
	if got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "pwd"}); got != "/mnt/user-data/workspace\n" {
		t.Errorf("pwd = %q", got)
	}
	got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "printf %s /mnt/user-data/outputs; echo; ls -d /mnt/user-data/workspace/a.txt"})
	if want := "/mnt/user-data/outputs\n/mnt/user-data/workspace/a.txt\n"; got != want {
		t.Errorf("bash output = %q, want %q", got, want)
	}
	if strings.Contains(got, f.home) {
		t.Errorf("host path leaked: %q", got)
	}
}

// Through the tools: traversal rejected, bare
// /mnt/user-data rejected, skills writes rejected, read-only mounts
// respected.
func TestToolsRejectTraversalAndReadOnlyWrites(t *testing.T) {
	mnt := t.TempDir()
	f := newFixture(t, fixtureOpts{mutate: func(c *config.Config) {
		c.Sandbox.Mounts = []config.Mount{{HostPath: mnt, ContainerPath: "/mnt/ref", ReadOnly: true}}
	}})
	for _, tc := range []struct {
		name, tool, path, want string
	}{
		{"dotdot", "read_file", "/mnt/user-data/workspace/../../../../etc/passwd", "Error: Access denied: path traversal detected"},
		{"backslash dotdot", "read_file", `/mnt/user-data/workspace\..\..\x`, "Error: Access denied: path traversal detected"},
		{"bare user-data", "ls", "/mnt/user-data", "Error: Only paths under /mnt/user-data/, /mnt/skills/, /mnt/acp-workspace/, or configured mount paths are allowed"},
		{"skills write", "write_file", "/mnt/skills/public/pdf/SKILL.md", "Error: Write access to skills path is not allowed: /mnt/skills/public/pdf/SKILL.md"},
		{"skills str_replace", "str_replace", "/mnt/skills/public/pdf/SKILL.md", "Error: Write access to skills path is not allowed: /mnt/skills/public/pdf/SKILL.md"},
		{"acp write", "write_file", "/mnt/acp-workspace/x", "Error: Write access to ACP workspace is not allowed: /mnt/acp-workspace/x"},
		{"ro mount write", "write_file", "/mnt/ref/x", "Error: Write access to read-only mount is not allowed: /mnt/ref/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": tc.path, "content": "x", "old_str": "a", "new_str": "b"}
			res := f.call(t, "u1", "t1", tc.tool, args)
			if got := res.TextContent(); got != tc.want || !res.IsError {
				t.Errorf("got %q (IsError %v), want %q", got, res.IsError, tc.want)
			}
		})
	}
	// Reading the skill and the read-only mount works.
	if got := f.text(t, "u1", "t1", "read_file", map[string]any{"path": "/mnt/skills/public/pdf/SKILL.md"}); !strings.Contains(got, "name: pdf") {
		t.Errorf("read skill = %q", got)
	}
	mustDo(t, os.WriteFile(filepath.Join(mnt, "ref.txt"), []byte("ref"), 0o644))
	if got := f.text(t, "u1", "t1", "read_file", map[string]any{"path": "/mnt/ref/ref.txt"}); got != "ref" {
		t.Errorf("read mount = %q", got)
	}
	if got := f.text(t, "u1", "t1", "ls", map[string]any{"path": "/mnt/skills"}); !strings.Contains(got, "/mnt/skills/public/\n/mnt/skills/public/pdf/") {
		t.Errorf("ls /mnt/skills = %q", got)
	}
}

// Local bash — host paths rejected, http/https URLs
// allowed, /dev/null and /bin/sh allowed, cd /, cd .., cd $HOME and
// multiline cd escapes rejected, workspace-relative paths allowed,
// file:// rejected.
func TestLocalBashCommandValidation(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true})
	for _, tc := range []struct {
		name, cmd, wantErr string // wantErr "" = allowed
	}{
		{"host path", "cat /etc/passwd", "Unsafe absolute paths in command: /etc/passwd. Use paths under /mnt/user-data"},
		{"two host paths sorted", "cp /etc/shadow /root/x", "Unsafe absolute paths in command: /etc/shadow, /root/x. Use paths under /mnt/user-data"},
		{"brace expansion", "cat /etc/{passwd,shadow}", "Unsafe absolute paths in command: /etc/{passwd,shadow}. Use paths under /mnt/user-data"},
		{"http url", "curl -sS https://example.com/a/b?x=1 -o /mnt/user-data/workspace/a.html", ""},
		{"http assignment url", "URL=http://example.com/x; echo $URL", ""},
		{"dev null", "ls > /dev/null 2>&1", ""},
		{"bin sh", "/bin/sh -c 'echo hi'", ""},
		{"usr bin", "/usr/bin/env python3 -V", ""},
		{"cd root", "cd / && ls", "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data"},
		{"cd dotdot", "cd .. && ls", "Access denied: path traversal detected"},
		{"cd home var", "cd $HOME", "Unsafe working directory change in command: cd $HOME. Use paths under /mnt/user-data"},
		{"cd tilde", "cd ~", "Unsafe working directory change in command: cd ~. Use paths under /mnt/user-data"},
		{"cd bare", "cd", "Unsafe working directory change in command: cd. Use paths under /mnt/user-data"},
		{"cd dash", "cd -", "Unsafe working directory change in command: cd. Use paths under /mnt/user-data"},
		{"multiline cd", "echo ok\ncd /\nls", "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data"},
		{"pushd host", "pushd /tmp", "Unsafe working directory change in command: pushd /tmp. Use paths under /mnt/user-data"},
		{"command cd", "command cd /", "Unsafe working directory change in command: cd /. Use paths under /mnt/user-data"},
		{"cd in substitution", "x=$(cd /; ls)", "Unsafe working directory change in command substitution. Use paths under /mnt/user-data"},
		{"relative dotdot", "cat ../../secret", "Access denied: path traversal detected"},
		{"ls root", "ls /", "Unsafe absolute paths in command: /. Use paths under /mnt/user-data"},
		{"file url", "curl file:///etc/passwd", "Unsafe file:// URL in command: file:///etc/passwd. Use paths under /mnt/user-data"},
		{"workspace relative", "mkdir -p sub && echo hi > sub/a.txt && cat sub/a.txt", ""},
		{"cd virtual", "cd /mnt/user-data/outputs && ls", ""},
		{"cd relative", "mkdir -p d && cd d && pwd", ""},
		{"skills path", "ls /mnt/skills/public", ""},
		{"rest template literal", `python3 -c "print('/devices/{id}/port')"`, ""},
		{"non-ascii literal", `echo "/端口"`, ""},
		{"virtual dotdot", "cat /mnt/user-data/workspace/../../x", "Access denied: path traversal detected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateCommand(f.layout, tc.cmd, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			// The tool returns the same text as an error result.
			res := f.call(t, "u1", "t1", "bash", map[string]any{"command": tc.cmd})
			if !res.IsError || res.TextContent() != "Error: "+tc.wantErr {
				t.Errorf("tool result = %q", res.TextContent())
			}
		})
	}
	if got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "mkdir -p sub && echo hi > sub/a.txt && cat sub/a.txt"}); got != "hi\n" {
		t.Errorf("workspace-relative run = %q", got)
	}
}

func TestBashGateAndOutputs(t *testing.T) {
	off := newFixture(t, fixtureOpts{})
	res := off.call(t, "u1", "t1", "bash", map[string]any{"command": "echo hi"})
	if want := "Error: " + hostBashDisabledMessage; res.TextContent() != want || !res.IsError {
		t.Errorf("gate = %q", res.TextContent())
	}
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) { c.Sandbox.BashCommandTimeout = 1 }})
	for _, tc := range []struct{ cmd, want string }{
		{"true", "(no output)"},
		{"echo out; echo err >&2", "out\n\nStd Error:\nerr\n"},
		{"echo err >&2", "err\n"},
		{"echo x; exit 3", "x\n\nExit Code: 3"},
		{"read line; echo \"got:$line\"", "got:\n"},
		{"sleep 0.1 & echo started", "started\n"},
	} {
		if got := f.text(t, "u1", "t1", "bash", map[string]any{"command": tc.cmd}); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) { c.Sandbox.BashCommandTimeout = 1 }})
	tp := f.paths(t, "u1", "t1")
	// A child in the group that would write a file after the timeout.
	got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "echo begin; (sleep 2; echo late > late.txt) & sleep 30"})
	want := "begin\n\n" + timeoutNotice(1)
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(want, "Command timed out after 1 second and was terminated.") {
		t.Errorf("notice wording: %q", want)
	}
	// The background child was in the killed group: no late file.
	deadline := 3000
	for i := 0; i < deadline/100; i++ {
		if _, err := os.Stat(filepath.Join(tp.Workspace, "late.txt")); err == nil {
			t.Fatal("a child of the timed-out command survived and wrote late.txt")
		}
		sleepMillis(100)
	}
}

func TestBashEnvStripsSecrets(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, toolsOpt: func(o *ToolsOptions) {
		o.Environ = func() []string {
			return []string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-host", "DATABASE_URL=postgres://x", "MY_PASSWORD=p", "PLAIN=ok"}
		}
	}})
	got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "echo \"${OPENAI_API_KEY:-none} ${DATABASE_URL:-none} ${MY_PASSWORD:-none} $PLAIN\""})
	if got != "none none none ok\n" {
		t.Errorf("env = %q", got)
	}
}

// Truncation helpers never exceed the limit; 0
// disables; head/tail preserved; markers report counts.
func TestTruncationHelpers(t *testing.T) {
	long := strings.Repeat("a", 500) + "MIDDLE" + strings.Repeat("z", 500)
	for _, max := range []int{1, 10, 50, 60, 100, 500, 1005, 1006, 5000} {
		for name, got := range map[string]string{
			"middle":  truncateMiddle(long, max, "middle truncated"),
			"read":    truncateHead(long, max, readFileHint),
			"ls":      truncateHead(long, max, lsHint),
			"writeEr": truncateMiddle(long, max, "write_file error truncated"),
		} {
			if n := utf8.RuneCountInString(got); n > max && n > 0 && len(long) > max {
				t.Errorf("%s max %d: length %d", name, max, n)
			}
		}
	}
	if truncateMiddle(long, 0, "middle truncated") != long || truncateHead(long, 0, lsHint) != long {
		t.Error("0 must disable truncation")
	}
	got := truncateMiddle(long, 200, "middle truncated")
	if !strings.HasPrefix(got, "aaaa") || !strings.HasSuffix(got, "zzzz") || !strings.Contains(got, "\n... [middle truncated: ") {
		t.Errorf("middle = %q", got)
	}
	kept := 200 - len("\n... [middle truncated: 1006 chars skipped] ...\n")
	if !strings.Contains(got, "[middle truncated: "+strconv.Itoa(1006-kept)+" chars skipped]") {
		t.Errorf("middle marker count wrong: %q", got)
	}
	head := truncateHead(long, 300, readFileHint)
	k := 300 - utf8.RuneCountInString("\n... [truncated: showing first 1006 of 1006 chars. "+readFileHint+"] ...")
	if want := "\n... [truncated: showing first " + strconv.Itoa(k) + " of 1006 chars. Use start_line/end_line to read a specific range] ..."; !strings.HasSuffix(head, want) {
		t.Errorf("head marker = %q", head[len(head)-120:])
	}
	// Multi-byte text is counted in characters and never split.
	uni := strings.Repeat("é", 3000)
	if got := truncateHead(uni, 1000, lsHint); !utf8.ValidString(got) || utf8.RuneCountInString(got) > 1000 {
		t.Error("unicode head truncation broken")
	}

	// Through the tools.
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) {
		c.Sandbox.ReadFileOutputMaxChars = 300
		c.Sandbox.BashOutputMaxChars = 200
		c.Sandbox.LsOutputMaxChars = 250
	}})
	tp := f.paths(t, "u1", "t1")
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "big.txt"), []byte(long), 0o644))
	for i := 0; i < 40; i++ {
		mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "file-"+strconv.Itoa(i)+".txt"), nil, 0o644))
	}
	if got := f.text(t, "u1", "t1", "read_file", map[string]any{"path": "/mnt/user-data/workspace/big.txt"}); utf8.RuneCountInString(got) > 300 || !strings.Contains(got, "[truncated: showing first") {
		t.Errorf("read_file truncation: %d chars", utf8.RuneCountInString(got))
	}
	if got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "cat big.txt"}); utf8.RuneCountInString(got) > 200 || !strings.Contains(got, "[middle truncated:") {
		t.Errorf("bash truncation: %q", got)
	}
	if got := f.text(t, "u1", "t1", "ls", map[string]any{"path": "/mnt/user-data/workspace"}); utf8.RuneCountInString(got) > 250 || !strings.Contains(got, "Use a more specific path") {
		t.Errorf("ls truncation: %q", got)
	}
}

// Write_file cap — below ok; above → error; append
// bypass; env override raise / zero / malformed.
func TestWriteFileSizeCap(t *testing.T) {
	env := map[string]string{}
	f := newFixture(t, fixtureOpts{rbw: ptr(false), toolsOpt: func(o *ToolsOptions) {
		o.Getenv = func(k string) string { return env[k] }
	}})
	big := strings.Repeat("x", defaultWriteFileCallMaxBytes+1)
	write := func(content string, appendMode bool) *tool.Result {
		return f.call(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/outputs/r.md", "content": content, "append": appendMode})
	}
	if got := write(strings.Repeat("x", defaultWriteFileCallMaxBytes), false).TextContent(); got != "OK" {
		t.Errorf("at cap: %q", got)
	}
	res := write(big, false)
	want := "Error: write_file content (81921 bytes) exceeds the 81920-byte single-call limit. Split the content into smaller pieces: " +
		"either (a) write the first section now, then use `str_replace` for further edits, or (b) call write_file again with append=True " +
		"carrying the next section. See SIZE POLICY in the tool docstring or issue #3189 for the rationale."
	if diff := cmp.Diff(want, res.TextContent()); diff != "" || !res.IsError {
		t.Errorf("over cap (-want +got):\n%s", diff)
	}
	if got := write(big, true).TextContent(); got != "OK" {
		t.Errorf("append bypass: %q", got)
	}
	env[writeFileMaxBytesEnv] = strconv.Itoa(200 * 1024)
	if got := write(big, false).TextContent(); got != "OK" {
		t.Errorf("raised cap: %q", got)
	}
	env[writeFileMaxBytesEnv] = "0"
	if got := write(big+big, false).TextContent(); got != "OK" {
		t.Errorf("zero disables: %q", got)
	}
	env[writeFileMaxBytesEnv] = "-5"
	if got := write(big, false).TextContent(); got != "OK" {
		t.Errorf("negative disables: %q", got)
	}
	env[writeFileMaxBytesEnv] = "lots"
	if got := write(big, false).TextContent(); !strings.Contains(got, "exceeds the 81920-byte single-call limit") {
		t.Errorf("malformed falls back to default: %q", got)
	}
	env[writeFileMaxBytesEnv] = "10"
	if got := write("héllo wörld", false).TextContent(); !strings.Contains(got, "(13 bytes) exceeds the 10-byte") {
		t.Errorf("bytes are UTF-8 bytes: %q", got)
	}
}

func TestWriteFileCeilingAndErrors(t *testing.T) {
	f := newFixture(t, fixtureOpts{rbw: ptr(false), mutate: func(c *config.Config) { c.Sandbox.WriteFileMaxBytes = 10 }})
	tp := f.paths(t, "u1", "t1")
	if got := f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/a", "content": "12345678"}); got != "OK" {
		t.Fatal(got)
	}
	got := f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/a", "content": "123", "append": true})
	wantPrefix(t, got, "Error: Failed to write file '/mnt/user-data/workspace/a': FileTooLarge:")
	mustDo(t, os.Mkdir(filepath.Join(tp.Workspace, "d"), 0o755))
	if got := f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/d", "content": "x"}); got != "Error: Path is a directory, not a file: /mnt/user-data/workspace/d" {
		t.Errorf("dir: %q", got)
	}
	if got := f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/new/deep/f.txt", "content": "x"}); got != "OK" {
		t.Errorf("parents: %q", got)
	}
	// Atomic: no temporary files are left behind.
	ents, _ := os.ReadDir(tp.Workspace)
	for _, e := range ents {
		if strings.Contains(e.Name(), "antler-tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// Read_file on binary returns the binary-file
// guidance; line-range edge strings.
func TestReadFileBinaryAndLineRanges(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	mustDo(t, os.WriteFile(filepath.Join(tp.Uploads, "sheet.xlsx"), []byte("PK\x03\x04\xff\xfe\x00binary"), 0o644))
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "lines.txt"), []byte("one\r\ntwo\nthree\n"), 0o644))
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "empty.txt"), nil, 0o644))
	res := f.call(t, "u1", "t1", "read_file", map[string]any{"path": "/mnt/user-data/uploads/sheet.xlsx"})
	want := "Error: cannot read '/mnt/user-data/uploads/sheet.xlsx' as text — it appears to be a binary file (e.g. .xlsx, .pdf, or an image). " +
		"read_file only supports UTF-8 text. Use bash with a suitable library instead (pandas/openpyxl for spreadsheets), or view_image for images."
	if res.TextContent() != want || !res.IsError {
		t.Errorf("binary = %q", res.TextContent())
	}
	p := "/mnt/user-data/workspace/lines.txt"
	for _, tc := range []struct {
		name       string
		start, end *int
		want       string
	}{
		{"whole", nil, nil, "one\ntwo\nthree\n"},
		{"range", ptr(2), ptr(3), "two\nthree"},
		{"single", ptr(1), ptr(1), "one"},
		{"from", ptr(2), nil, "two\nthree"},
		{"to", nil, ptr(1), "one"},
		{"end past length", ptr(3), ptr(99), "three"},
		{"start zero", ptr(0), nil, "(start_line must be >= 1)"},
		{"end zero", nil, ptr(0), "(end_line must be >= 1)"},
		{"start after end", ptr(3), ptr(2), "(start_line > end_line — no lines in range)"},
		{"start past length", ptr(9), nil, "(start_line exceeds file length)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": p}
			if tc.start != nil {
				args["start_line"] = *tc.start
			}
			if tc.end != nil {
				args["end_line"] = *tc.end
			}
			if got := f.text(t, "u1", "t1", "read_file", args); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ path, want string }{
		{"/mnt/user-data/workspace/empty.txt", "(empty)"},
		{"/mnt/user-data/workspace/missing.txt", "Error: File not found: /mnt/user-data/workspace/missing.txt"},
		{"/mnt/user-data/workspace", "Error: Path is a directory, not a file: /mnt/user-data/workspace"},
	} {
		if got := f.text(t, "u1", "t1", "read_file", map[string]any{"path": tc.path}); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
		}
	}
}

// Str_replace — empty old_str no-op; missing
// string error; replace_all.
func TestStrReplace(t *testing.T) {
	f := newFixture(t, fixtureOpts{rbw: ptr(false)})
	tp := f.paths(t, "u1", "t1")
	file := filepath.Join(tp.Workspace, "s.txt")
	mustDo(t, os.WriteFile(file, []byte("a-a-a"), 0o644))
	p := "/mnt/user-data/workspace/s.txt"
	sr := func(old, new string, all bool) string {
		return f.text(t, "u1", "t1", "str_replace", map[string]any{"path": p, "old_str": old, "new_str": new, "replace_all": all})
	}
	content := func() string { b, _ := os.ReadFile(file); return string(b) }
	if got := sr("", "X", false); got != "OK" || content() != "a-a-a" {
		t.Errorf("empty old_str: %q, file %q", got, content())
	}
	if got := sr("zzz", "X", false); got != "Error: String to replace not found in file: "+p {
		t.Errorf("missing: %q", got)
	}
	if got := sr("a", "b", false); got != "OK" || content() != "b-a-a" {
		t.Errorf("first only: %q, file %q", got, content())
	}
	if got := sr("a", "c", true); got != "OK" || content() != "b-c-c" {
		t.Errorf("replace_all: %q, file %q", got, content())
	}
	if got := f.text(t, "u1", "t1", "str_replace", map[string]any{"path": "/mnt/user-data/workspace/none", "old_str": "a", "new_str": "b"}); got != "Error: File not found: /mnt/user-data/workspace/none" {
		t.Errorf("not found: %q", got)
	}
}

// Read-before-write — overwrite of an unread
// existing file blocked; new file allowed; any write invalidates the mark.
func TestReadBeforeWrite(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	p := "/mnt/user-data/workspace/doc.md"
	write := func(content string, appendMode bool) *tool.Result {
		return f.call(t, "u1", "t1", "write_file", map[string]any{"path": p, "content": content, "append": appendMode})
	}
	if got := write("line1\nline2\n", false).TextContent(); got != "OK" {
		t.Fatalf("new file: %q", got)
	}
	res := write("other", false)
	want := "Error: write_file blocked — /mnt/user-data/workspace/doc.md already exists (2 lines) and you have not read its current version. " +
		"Any write invalidates earlier reads, so re-read before every modification. Call read_file on it first (e.g. start_line=1, end_line=2), check what is already there, then retry."
	if diff := cmp.Diff(want, res.TextContent()); diff != "" || !res.IsError {
		t.Errorf("blocked (-want +got):\n%s", diff)
	}
	if res.Meta[WriteBlockMeta] == nil {
		t.Error("no write-block meta")
	}
	if got := write("more", true).TextContent(); !strings.HasPrefix(got, "Error: write_file blocked") {
		t.Errorf("append to unread file: %q", got)
	}
	f.text(t, "u1", "t1", "read_file", map[string]any{"path": p, "start_line": 2, "end_line": 2}) // a ranged read is enough
	if got := write("v2\n", false).TextContent(); got != "OK" {
		t.Fatalf("after read: %q", got)
	}
	// The write invalidated the mark: a second write needs a new read.
	if got := write("v3\n", false).TextContent(); !strings.HasPrefix(got, "Error: write_file blocked — "+p+" already exists (1 line)") {
		t.Errorf("second write: %q", got)
	}
	got := f.text(t, "u1", "t1", "str_replace", map[string]any{"path": p, "old_str": "v2", "new_str": "v3"})
	wantPrefix(t, got, "Error: str_replace blocked — "+p)
	f.text(t, "u1", "t1", "read_file", map[string]any{"path": p})
	if got := f.text(t, "u1", "t1", "str_replace", map[string]any{"path": p, "old_str": "v2", "new_str": "v3"}); got != "OK" {
		t.Errorf("str_replace after read: %q", got)
	}
	// A change made outside the tools (bash, the user) also stales the mark.
	f.text(t, "u1", "t1", "read_file", map[string]any{"path": p})
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "doc.md"), []byte("changed\n"), 0o644))
	if got := write("v4", false).TextContent(); !strings.HasPrefix(got, "Error: write_file blocked") {
		t.Errorf("external change: %q", got)
	}
	// Empty existing file: the simple hint.
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "e.md"), nil, 0o644))
	got = f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/e.md", "content": "x"})
	if !strings.HasSuffix(got, "(0 lines) and you have not read its current version. Any write invalidates earlier reads, so re-read before every modification. Call read_file on it first, check what is already there, then retry.") {
		t.Errorf("empty file: %q", got)
	}
	// Marks are per thread: a read in t2 does not open t1's file.
	off := newFixture(t, fixtureOpts{rbw: ptr(false)})
	mustDo(t, os.WriteFile(filepath.Join(off.paths(t, "u1", "t1").Workspace, "x"), []byte("x"), 0o644))
	if got := off.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/x", "content": "y"}); got != "OK" {
		t.Errorf("read_before_write.enabled=false still gates: %q", got)
	}
}

// Secret masking — injected values of 8 or more
// characters are redacted, shorter ones left alone.
func TestSecretMasking(t *testing.T) {
	injected := map[string]string{"ERP_TOKEN": "tok-12345678", "SHORT": "abc1234", "LONGER": "tok-12345678-extended"}
	got := redactSecrets("a tok-12345678-extended b tok-12345678 c abc1234", injected)
	if want := "a [redacted] b [redacted] c abc1234"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	f := newFixture(t, fixtureOpts{hostBash: true, toolsOpt: func(o *ToolsOptions) {
		o.InjectEnv = func(*tool.Call) map[string]string { return injected }
	}})
	out := f.text(t, "u1", "t1", "bash", map[string]any{"command": `echo "$ERP_TOKEN|$SHORT|$LONGER"`})
	if out != "[redacted]|abc1234|[redacted]\n" {
		t.Errorf("bash output = %q", out)
	}
}
